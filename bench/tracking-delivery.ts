/**
 * Delivery with tracking on against delivery with it off, for ordinary ~5 KB HTML messages with
 * 40 links each: runs `bench/delivery.ts` alternately (off, on, off, on, ...) as fresh processes
 * so both see the same machine, then prints each side's messages/s and CPU per message
 * (min/median/max) and the ratios of the medians.
 *
 *   npx tsx bench/tracking-delivery.ts [pairs=5] [messages=2000]
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const pairs = Number(process.argv[2] ?? 5);
const messages = String(process.argv[3] ?? 2000);
const delivery = fileURLToPath(new URL('./delivery.ts', import.meta.url));

interface Run {
  messages_per_s: number;
  cpu_ms_per_message: number;
}

function run(tracking: 'on' | 'off'): Run {
  const out = execFileSync(process.execPath, ['--import', 'tsx', delivery, messages, '1', '50', '5', tracking], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!) as Run;
}

const runs: Record<'on' | 'off', Run[]> = { off: [], on: [] };
for (let i = 0; i < pairs; i++) for (const side of ['off', 'on'] as const) runs[side].push(run(side));

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)]!;
const spread = (xs: number[]) => `${sorted(xs)[0]}/${median(xs)}/${sorted(xs).at(-1)}`;
const rate = (side: 'on' | 'off') => runs[side].map((r) => r.messages_per_s);
const cpu = (side: 'on' | 'off') => runs[side].map((r) => r.cpu_ms_per_message);
console.log(
  JSON.stringify({
    pairs,
    messages: Number(messages),
    off_msgs_per_s: spread(rate('off')),
    on_msgs_per_s: spread(rate('on')),
    off_cpu_ms_per_msg: spread(cpu('off')),
    on_cpu_ms_per_msg: spread(cpu('on')),
    ratio_msgs_per_s: Number((median(rate('on')) / median(rate('off'))).toFixed(2)),
    ratio_cpu: Number((median(cpu('off')) / median(cpu('on'))).toFixed(2)),
  }),
);
