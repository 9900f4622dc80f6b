import type { Config } from '../config/schema.ts';

export interface Relay {
  host: string;
  port: number;
  user?: string;
  pass?: string;
}

/** `delivery.relayHost` (`host:port`, validated at start) with its optional AUTH. */
export function relayOf(config: Config['delivery']): Relay | undefined {
  if (!config.relayHost) return undefined;
  const at = config.relayHost.lastIndexOf(':');
  return {
    host: config.relayHost.slice(0, at),
    port: Number(config.relayHost.slice(at + 1)),
    ...(config.relayUser !== null ? { user: config.relayUser, pass: config.relayPassword ?? '' } : {}),
  };
}
