import { isIP } from 'node:net';
import type { Clock } from '../core/ports.ts';
import { clientKey } from '../ratelimit/connections.ts';

/** Whether a client on `ip` may authenticate before TLS (`submission.allowInsecureAuth`, `.loopbackInsecureAuth`). */
export function insecureAuthAllowed(options: { allowInsecureAuth: boolean; loopbackInsecureAuth: boolean }, ip: string): boolean {
  return options.allowInsecureAuth || (options.loopbackInsecureAuth && isLoopback(ip));
}

export function isLoopback(ip: string): boolean {
  const v4 = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return ip === '::1';
}

/**
 * Failed AUTH attempts per remote address in fixed windows, in memory: past `max` failures an
 * address is refused without its key even being looked up until the window ends, which turns
 * guessing into a few attempts per window. Bounded: past `maxAddresses` new addresses go uncounted
 * rather than grow the table.
 */
export class AuthFailures {
  private window = -1;
  private counts = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly max = 10,
    private readonly windowMs = 300_000,
    private readonly maxAddresses = 100_000,
  ) {}

  private current(): Map<string, number> {
    const window = Math.floor(this.clock.now() / this.windowMs);
    if (window !== this.window) {
      this.window = window;
      this.counts = new Map();
    }
    return this.counts;
  }

  /** Counted by `clientKey`: an IPv6 client's whole /64 shares one count. */
  blocked(address: string): boolean {
    return (this.current().get(clientKey(address)) ?? 0) >= this.max;
  }

  fail(address: string): void {
    const ip = clientKey(address);
    const counts = this.current();
    if (!counts.has(ip) && counts.size >= this.maxAddresses) return;
    counts.set(ip, (counts.get(ip) ?? 0) + 1);
  }
}
