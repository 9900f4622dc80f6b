import type { Clock } from '../../src/core/ports.ts';

/** How a provider treats a sender; every limit is off unless set. Replies are whole lines, `CODE text`. */
export interface FarmBehaviour {
  /** Connections served at once; the next one is answered `tooManyConnectionsReply` at the greeting and closed. */
  maxConnections?: number;
  tooManyConnectionsReply?: string;
  /** Recipients admitted at RCPT per sliding window (default 60 000 ms); beyond it RCPT gets `reply`. */
  perMinute?: { limit: number; windowMs?: number; reply?: string };
  /**
   * Once `afterMessages` messages were accepted (counted from when the block was set), every RCPT
   * gets `reply` for `forMs`, once; the first RCPT after that gets it however late it comes, so a
   * loaded machine that sends the next message after `forMs` still meets the block.
   */
  block?: { afterMessages: number; reply: string; forMs: number };
  /** Wait before the reply to DATA. */
  latencyMs?: number;
}

export interface FarmProviderSpec extends FarmBehaviour {
  name: string;
  /** The loopback address its sink listens on (127.0.0.2, ...): one sink per address. */
  address: string;
  /** Each gets an A record to `address`; every domain's MX list is these, at preferences 10, 20, ... */
  mxHosts: string[];
  /** Recipient domains it hosts; RCPT to any other domain is refused as relaying. */
  domains: string[];
}

/** A change of behaviour at run time: a key set to null turns that limit off. */
export type BehaviourChange = { [K in keyof FarmBehaviour]?: FarmBehaviour[K] | null };

/** One accepted message: one envelope recipient of a transaction that ended in 250 after DATA. */
export interface FarmAccepted {
  at: number;
  /**
   * When its recipient was admitted at RCPT: the moment the provider counted it against its rate
   * (`at`, the end of DATA, comes later by the transfer and by however busy the machine is).
   */
  admittedAt: number;
  provider: string;
  from: string;
  to: string;
  /** The Message-ID header, angle brackets included, or null without one. */
  messageId: string | null;
  connectionId: string;
  helo: string;
  /** The sender's address as the sink sees it (the source address a client bound). */
  clientAddress: string;
}

export type RefusalReason = 'connections' | 'rate' | 'block' | 'relay';

export interface FarmRefusal {
  at: number;
  reason: RefusalReason;
  /** The reply line sent, `CODE text`. */
  reply: string;
  /** The recipient refused; null for a connection refused at the greeting. */
  to: string | null;
  connectionId: string;
  clientAddress: string;
}

export interface FarmConnection {
  id: string;
  clientAddress: string;
  openedAt: number;
  closedAt: number | null;
  helo: string;
  /** Messages accepted on it. */
  messages: number;
  /** The greeting reply when it was turned away, else null. */
  refused: string | null;
  /** When each recipient of its transaction was admitted at RCPT. */
  admitted: Map<string, number>;
}

/** What the tests read of one provider; the arrays and counters are live. */
export interface ProviderStats {
  readonly name: string;
  readonly address: string;
  readonly accepted: readonly FarmAccepted[];
  readonly refused: readonly FarmRefusal[];
  /** Every connection ever opened, refused ones included. */
  readonly connectionList: readonly FarmConnection[];
  /** Connections open now (every TCP connection, refused ones until they close). */
  readonly connections: number;
  /** The most connections ever open at once, counted at accept and at close, refused ones included. */
  readonly connectionsPeak: number;
  readonly messagesPerConnectionPeak: number;
  /**
   * The most accepted messages admitted within any `windowMs` (a half-open span [t, t + windowMs)),
   * counted by their admission at RCPT as the provider's own rate limit counts them.
   */
  maxInWindow(windowMs: number): number;
}

export interface FarmReply {
  code: number;
  message: string;
}

/**
 * The most of `accepted` admitted within any `windowMs` (a half-open span [t, t + windowMs)), by
 * their admission at RCPT, where a provider's rate limit counts them.
 */
export function mostInWindow(accepted: readonly FarmAccepted[], windowMs: number): number {
  const times = accepted.map((a) => a.admittedAt).sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while (times[end]! - times[start]! >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

export const DEFAULT_TOO_MANY_CONNECTIONS = '421 4.7.0 Too many concurrent SMTP connections, try again later';
// Gmail's wording for its per-IP rate limit (the reply the built-in 421 4.7.28 rule is about).
export const DEFAULT_RATE_LIMITED =
  '421 4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address. ' +
  'To protect our users from spam, mail sent from your IP address has been temporarily rate limited.';
export const RELAY_DENIED = '550 5.7.1 Relaying denied: this host does not serve that domain';

/** `421 4.7.0 text` → code and the rest, the shape smtp-server answers with. */
export function parseReply(line: string): FarmReply {
  const match = /^([2-5]\d\d) (.+)$/.exec(line);
  if (!match) throw new Error(`provider farm: a reply is "CODE text", not ${JSON.stringify(line)}`);
  return { code: Number(match[1]), message: match[2]! };
}

/** Times of admitted recipients, oldest first; pruned to the window as it slides. */
class SlidingWindow {
  private times: number[] = [];
  private head = 0;

  count(now: number, windowMs: number): number {
    while (this.head < this.times.length && this.times[this.head]! <= now - windowMs) this.head++;
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
    return this.times.length - this.head;
  }

  add(at: number): void {
    this.times.push(at);
  }
}

function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * One provider's limits and records, without sockets: the farm calls `opened`/`closed` per TCP
 * connection, `admit` at the greeting, `checkRecipient` at RCPT and `accept` after DATA.
 */
export class FarmProvider implements ProviderStats {
  readonly name: string;
  readonly address: string;
  readonly accepted: FarmAccepted[] = [];
  readonly refused: FarmRefusal[] = [];
  readonly connectionList: FarmConnection[] = [];
  connections = 0;
  connectionsPeak = 0;
  messagesPerConnectionPeak = 0;
  private admitted = new Set<FarmConnection>();
  private behaviour: FarmBehaviour;
  private readonly domains: Set<string>;
  private readonly window = new SlidingWindow();
  private blockFrom = 0;
  private blockedUntil = Number.NEGATIVE_INFINITY;
  private blockSpent = false;
  private blockMet = false;

  constructor(
    spec: FarmProviderSpec,
    private readonly clock: Clock,
    private readonly onAccept: (message: FarmAccepted) => void,
  ) {
    this.name = spec.name;
    this.address = spec.address;
    this.domains = new Set(spec.domains.map((domain) => domain.toLowerCase()));
    const { maxConnections, tooManyConnectionsReply, perMinute, block, latencyMs } = spec;
    this.behaviour = {};
    this.change({ maxConnections, tooManyConnectionsReply, perMinute, block, latencyMs });
  }

  get latencyMs(): number {
    return this.behaviour.latencyMs ?? 0;
  }

  change(change: BehaviourChange): void {
    const next: Record<string, unknown> = { ...this.behaviour };
    for (const [key, value] of Object.entries(change)) {
      if (value === null || value === undefined) delete next[key];
      else next[key] = value;
    }
    for (const reply of [next.tooManyConnectionsReply, change.perMinute?.reply, change.block?.reply]) {
      if (typeof reply === 'string') parseReply(reply);
    }
    this.behaviour = next as FarmBehaviour;
    if ('block' in change) {
      this.blockFrom = this.accepted.length;
      this.blockedUntil = Number.NEGATIVE_INFINITY;
      this.blockSpent = false;
      this.blockMet = false;
    }
  }

  hosts(domain: string): boolean {
    return this.domains.has(domain.toLowerCase());
  }

  addDomains(domains: string[]): void {
    for (const domain of domains) this.domains.add(domain.toLowerCase());
  }

  opened(clientAddress: string): FarmConnection {
    const connection: FarmConnection = { id: '', clientAddress, openedAt: this.clock.now(), closedAt: null, helo: '', messages: 0, refused: null, admitted: new Map() };
    this.connectionList.push(connection);
    this.connections++;
    this.connectionsPeak = Math.max(this.connectionsPeak, this.connections);
    return connection;
  }

  closed(connection: FarmConnection): void {
    connection.closedAt = this.clock.now();
    this.connections--;
    this.admitted.delete(connection);
  }

  /** The greeting's verdict: null to serve the connection, else the reply it gets before it is closed. */
  admit(connection: FarmConnection): FarmReply | null {
    const { maxConnections } = this.behaviour;
    // Turned-away connections that have not closed yet do not count, or one refusal would cause the next.
    if (maxConnections !== undefined && this.admitted.size >= maxConnections) {
      const reply = this.behaviour.tooManyConnectionsReply ?? DEFAULT_TOO_MANY_CONNECTIONS;
      connection.refused = reply;
      return this.refuse(connection, 'connections', reply, null);
    }
    this.admitted.add(connection);
    return null;
  }

  /** RCPT's verdict: null to take the recipient (it then counts against the rate), else the reply. */
  checkRecipient(connection: FarmConnection, to: string): FarmReply | null {
    const now = this.clock.now();
    if (!this.hosts(domainOf(to))) return this.refuse(connection, 'relay', RELAY_DENIED, to);
    const { block, perMinute } = this.behaviour;
    if (block && this.blockSpent && (now < this.blockedUntil || !this.blockMet)) {
      this.blockMet = true;
      return this.refuse(connection, 'block', block.reply, to);
    }
    if (perMinute) {
      if (this.window.count(now, perMinute.windowMs ?? 60_000) >= perMinute.limit) {
        return this.refuse(connection, 'rate', perMinute.reply ?? DEFAULT_RATE_LIMITED, to);
      }
    }
    this.window.add(now);
    connection.admitted.set(to, now);
    return null;
  }

  accept(connection: FarmConnection, message: Omit<FarmAccepted, 'at' | 'admittedAt' | 'provider' | 'connectionId' | 'clientAddress'>): void {
    const now = this.clock.now();
    const admittedAt = connection.admitted.get(message.to) ?? now;
    const accepted: FarmAccepted = { at: now, admittedAt, provider: this.name, connectionId: connection.id, clientAddress: connection.clientAddress, ...message };
    this.accepted.push(accepted);
    connection.helo = message.helo;
    connection.messages++;
    this.messagesPerConnectionPeak = Math.max(this.messagesPerConnectionPeak, connection.messages);
    const { block } = this.behaviour;
    if (block && !this.blockSpent && this.accepted.length - this.blockFrom >= block.afterMessages) {
      this.blockSpent = true;
      this.blockedUntil = now + block.forMs;
    }
    this.onAccept(accepted);
  }

  maxInWindow(windowMs: number): number {
    return mostInWindow(this.accepted, windowMs);
  }

  private refuse(connection: FarmConnection, reason: RefusalReason, reply: string, to: string | null): FarmReply {
    this.refused.push({ at: this.clock.now(), reason, reply, to, connectionId: connection.id, clientAddress: connection.clientAddress });
    return parseReply(reply);
  }
}
