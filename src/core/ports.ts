/** Side effects the capability modules depend on, injected so tests can control them. */

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A source of uniform numbers in [0, 1), injectable so retry jitter is testable. */
export type RandomSource = () => number;

export interface MxRecord {
  exchange: string;
  priority: number;
}

/**
 * DNS lookups through the configured servers. Failures throw a {@link DnsError} whose `kind`
 * tells a missing name (NXDOMAIN) from a name without records of that type and from a
 * temporary failure (SERVFAIL, timeout, refused), because delivery treats them differently.
 */
export interface DnsResolver {
  resolveMx(name: string): Promise<MxRecord[]>;
  resolveTxt(name: string): Promise<string[][]>;
  resolve4(name: string): Promise<string[]>;
  resolve6(name: string): Promise<string[]>;
}

export type DnsFailureKind = 'nxdomain' | 'nodata' | 'temporary';

export class DnsError extends Error {
  constructor(
    readonly kind: DnsFailureKind,
    readonly query: string,
    readonly code: string,
  ) {
    super(`DNS lookup of ${query} failed: ${code}`);
    this.name = 'DnsError';
  }
}

export interface Logger {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}
