/** Concurrent connections per remote address, counted only for sessions that were admitted. */
export class ConnectionLimiter {
  private readonly perIp = new Map<string, number>();
  private readonly admitted = new Map<string, string>();

  constructor(private readonly max: number) {}

  /** Counts the session in, or refuses it when its address already holds `max` connections. */
  admit(sessionId: string, ip: string): boolean {
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

  open(ip: string): number {
    return this.perIp.get(ip) ?? 0;
  }
}
