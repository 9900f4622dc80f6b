import type { Config } from '../config/schema.ts';
import { poolFor, type PoolInput } from '../delivery/pool-choice.ts';

const STREAMS = ['transactional', 'broadcast'] as const;
const FROM = { domain: "the domain's", workspace: "the workspace's", stream: "the stream's" } as const;

/** `none` on the command line clears a pool (the configuration cannot name a pool so). */
export const poolArgument = (value: string): string | null => (value === 'none' ? null : value);

/** What each stream's mail is sent from with these settings, as delivery chooses it. */
export function poolLines(settings: Omit<PoolInput, 'stream'>, delivery: Config['delivery']): string[] {
  return STREAMS.map((stream) => {
    const choice = poolFor({ ...settings, stream }, delivery);
    const addresses = choice.addresses.length > 0 ? choice.addresses.join(', ') : 'the address the system picks, greeting as server.hostname';
    const pool = choice.name === null ? 'every source address' : `pool ${choice.name} (${FROM[choice.from as keyof typeof FROM]})`;
    const from = choice.addresses.length > 0 ? `${pool}: ${addresses}` : addresses;
    return `  ${`${stream}:`.padEnd(15)}${from}${choice.warning ? ` (${choice.warning})` : ''}`;
  });
}
