import { isIP } from 'node:net';

/** The first four groups of an IPv6 address, expanded; null when `ip` is not IPv6. */
function prefix64(ip: string): string | null {
  if (isIP(ip) !== 6) return null;
  const [head, tail] = ip.toLowerCase().split('::') as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])) : []);
  const left = groups(head);
  const right = groups(tail);
  const full = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return `${full
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * The key a client is counted under: its IPv4 address, or the /64 its IPv6 address is in. A
 * host given IPv6 usually has a whole /64 (2^64 addresses), so counting by address would let it
 * open as many connections as it likes.
 */
export function clientKey(ip: string): string {
  const v4 = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  return prefix64(v4) ?? v4;
}

/** Concurrent connections per client (`clientKey`: IPv4 address or IPv6 /64), counted only for sessions that were admitted. */
export class ConnectionLimiter {
  private readonly perIp = new Map<string, number>();
  private readonly admitted = new Map<string, string>();

  constructor(private readonly max: number) {}

  /** Counts the session in, or refuses it when its address already holds `max` connections. */
  admit(sessionId: string, address: string): boolean {
    const ip = clientKey(address);
    const open = this.perIp.get(ip) ?? 0;
    if (open >= this.max) return false;
    this.perIp.set(ip, open + 1);
    this.admitted.set(sessionId, ip);
    return true;
  }

  release(sessionId: string): void {
    const ip = this.admitted.get(sessionId);
    if (ip === undefined) return;
    this.admitted.delete(sessionId);
    const open = (this.perIp.get(ip) ?? 1) - 1;
    if (open <= 0) this.perIp.delete(ip);
    else this.perIp.set(ip, open);
  }

  open(address: string): number {
    return this.perIp.get(clientKey(address)) ?? 0;
  }
}
