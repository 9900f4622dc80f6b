import { ServiceError } from '../core/errors.ts';
import type { Clock } from '../core/ports.ts';
import type { ProviderReport } from '../events/record.ts';
import { recordEngagement, recordUnsubscribe } from '../messages/outcomes.ts';
import type { Db } from '../store/db.ts';
import { domainsRepo } from '../store/domains.ts';
import type { GroupCommitter } from '../store/groupCommit.ts';
import { inboundRepo } from '../store/inbound.ts';
import { HitGate } from './gate.ts';
import { verifyClick, verifyRecipient, type TrackingCodecs } from './tokens.ts';

export interface HitDeps {
  db: Db;
  committer: GroupCommitter;
  clock: Clock;
  tokens: TrackingCodecs;
  /** Our `server.hostname`: the reporting MTA of what we observed ourselves. */
  hostname: string;
  gate?: HitGate;
}

/** Who made a request, as far as HTTP tells. */
export interface Requester {
  ip: string;
  userAgent: string | null;
}

/** What a verified token leads to; null for a forged, altered or unknown one. */
export type Hit<T> = T | null;

/**
 * The tracking and unsubscribe hits behind `/t/...`, knowing nothing of HTTP. Every hit counts
 * against its address's limit first, forged tokens included (else guessing tokens would be
 * unlimited); then the token is verified (a forged one costs one HMAC and touches nothing). The
 * domain's switches are read again at each hit, so turning tracking off silences mail already sent.
 */
export class TrackingHits {
  private readonly gate: HitGate;

  constructor(private readonly deps: HitDeps) {
    this.gate = deps.gate ?? new HitGate();
  }

  /** The pixel: true when the token is ours (the GIF is served), whether or not it counted. */
  async open(token: string, who: Requester): Promise<boolean> {
    this.limit(who);
    const recipientId = verifyRecipient(this.deps.tokens.open, token);
    if (recipientId === null) return false;
    await this.engage(recipientId, 'email.opened', who, 'open', 'tracking pixel loaded');
    return true;
  }

  /** A tracked link: the URL it was minted for, or null. */
  async click(token: string, who: Requester): Promise<Hit<string>> {
    this.limit(who);
    const hit = verifyClick(this.deps.tokens.click, token);
    if (hit === null) return null;
    await this.engage(hit.recipientId, 'email.clicked', who, `click ${hit.url}`, 'tracked link followed', hit.url);
    return hit.url;
  }

  /** Whether an unsubscribe token is ours and names a recipient we still know (the GET page). */
  async unsubscribable(token: string, who: Requester): Promise<boolean> {
    this.limit(who);
    const recipientId = verifyRecipient(this.deps.tokens.unsubscribe, token);
    if (recipientId === null) return false;
    return (await inboundRepo.recipientWithMessage(this.deps.db, recipientId)) !== null;
  }

  /** RFC 8058 one-click: `email.unsubscribed` and suppression on the message's stream. */
  async unsubscribe(token: string, who: Requester): Promise<boolean> {
    this.limit(who);
    const recipientId = verifyRecipient(this.deps.tokens.unsubscribe, token);
    if (recipientId === null) return false;
    const found = await inboundRepo.recipientWithMessage(this.deps.db, recipientId);
    if (!found) return false;
    const at = this.deps.clock.now();
    if (!this.gate.first(who.ip, `unsubscribe ${recipientId}`, at)) return true;
    await this.deps.committer.run((tx) =>
      recordUnsubscribe(tx, { message: found.message, recipient: found.recipient, at }, this.provider(who, 'one-click unsubscribe (RFC 8058)')),
    );
    return true;
  }

  private limit(who: Requester): void {
    const retryAfter = this.gate.limit(who.ip, this.deps.clock.now());
    if (retryAfter !== null) throw new ServiceError('RATE_LIMITED', 'Too many requests', { 'Retry-After': String(retryAfter) });
  }

  private async engage(recipientId: number, name: 'email.opened' | 'email.clicked', who: Requester, key: string, response: string, url?: string) {
    const at = this.deps.clock.now();
    if (!this.gate.first(who.ip, `${key}\n${recipientId}`, at)) return;
    const found = await inboundRepo.recipientWithMessage(this.deps.db, recipientId);
    if (!found) return;
    const domain = await domainsRepo.byName(this.deps.db, found.message.domain);
    const on = name === 'email.opened' ? domain?.open_tracking : domain?.click_tracking;
    if (!on) return;
    await this.deps.committer.run((tx) => recordEngagement(tx, { message: found.message, recipient: found.recipient, at }, name, this.provider(who, response), url));
  }

  private provider(who: Requester, response: string): ProviderReport {
    return { response, reporting_mta: this.deps.hostname, ip: who.ip, user_agent: who.userAgent };
  }
}
