import type { Clock } from '../core/ports.ts';

/**
 * Defaults for the listener's limits. The inbound MX faces the whole internet, so one peer must
 * not be able to hold every slot or fill the database with junk.
 */
export const INBOUND_LIMITS = {
  /** Connections in total (`inbound.maxConnections`); smtp-server answers the one over it with 421. */
  maxClients: 200,
  /**
   * Concurrent connections from one IP address (`inbound.maxConnectionsPerAddress`). Postfix's
   * smtpd_client_connection_count_limit is 50, but at 20 ten addresses held all 200 slots; a
   * reporting MTA opens a few at most.
   */
  maxConnectionsPerIp: 10,
  /** Messages one IP address may send per minute; DSN bursts after a campaign stay well under. */
  messagesPerMinutePerIp: 600,
  /** RCPTs per transaction; a report is addressed to one VERP address, a few at most. */
  maxRecipients: 10,
  /** RFC 5321 §4.5.3.2.7 asks a server to wait 5 minutes for the next command. */
  socketTimeoutMs: 300_000,
  /** How long a closing listener lets running sessions finish. */
  closeTimeoutMs: 10_000,
} as const;

/** Messages per remote address in fixed one-minute windows, kept in memory per process. */
export class MessageRateLimiter {
  private window = -1;
  private counts = new Map<string, number>();

  constructor(
    private readonly perMinute: number,
    private readonly clock: Clock,
  ) {}

  /** Counts one message; false when the address is over its limit for this minute. */
  hit(ip: string): boolean {
    const window = Math.floor(this.clock.now() / 60_000);
    if (window !== this.window) {
      this.window = window;
      this.counts = new Map();
    }
    const n = (this.counts.get(ip) ?? 0) + 1;
    this.counts.set(ip, n);
    return n <= this.perMinute;
  }
}
