import { recordEvent, recordEvents, type BounceType, type EventPayload, type ProviderReport } from '../events/record.ts';
import type { Statement, Tx } from '../store/db.ts';
import { deriveMessageStatuses, lockedStatusDerivations } from '../store/messageStatus.ts';
import { messagesRepo, type MessageRow, type RecipientRow } from '../store/messages.ts';
import { reputationRepo } from '../store/reputation.ts';
import { suppressionsRepo, type SuppressionReason } from '../store/suppressions.ts';
import type { RecipientStatus } from './status.ts';
import { labelsOf, readEnvelope } from './content.ts';

/**
 * What happened to one recipient, written in the caller's transaction: the recipient row, the
 * message's derived status, the event (outbox) and, where it applies, suppression. Shared by
 * delivery (synchronous replies) and the inbound listener (reports that arrive later).
 */

export interface Target {
  /** `envelope` gives the message's tags and metadata, which every payload of it carries. */
  message: Pick<MessageRow, 'id' | 'workspace_id' | 'stream' | 'domain' | 'envelope'>;
  recipient: Pick<RecipientRow, 'id' | 'address'>;
  at: number;
}

/** A warning a bounce raises on the message's sending domain (a receiver refused the sender's authentication). */
export interface DomainWarning {
  code: string;
  message: string;
}

const setStatus = (tx: Tx, t: Target, status: RecipientStatus, patch: Partial<RecipientRow> = {}) =>
  messagesRepo.finishRecipient(tx, t.message.id, t.recipient.id, status, t.at, patch);

async function suppress(tx: Tx, t: Target, reason: SuppressionReason): Promise<void> {
  await suppressionsRepo.add(tx, {
    workspace_id: t.message.workspace_id,
    stream: t.message.stream,
    address: t.recipient.address,
    reason,
    email_id: t.message.id,
    domain: t.message.domain,
    created_at: t.at,
  });
}

const event = (t: Target, name: EventPayload['event'], provider: ProviderReport, bounceType?: BounceType) => ({
  labels: labelsOf(readEnvelope(t.message.envelope)),
  workspaceId: t.message.workspace_id,
  emailId: t.message.id,
  recipientId: t.recipient.id,
  event: name,
  recipient: t.recipient.address,
  bounceType,
  provider,
  at: t.at,
});

/**
 * One recipient's outcome reported outside delivery's lease (a report that arrives later wins
 * over `delivered`): the recipient row when the outcome is final, then what `recordFinished`
 * does for a batch. A final status's write derives the message's status and so holds its lock;
 * otherwise the derivation in `recordFinished` takes it, before the event's time is chosen.
 */
export async function recordReported(
  tx: Tx,
  t: Target,
  outcome: { status: RecipientStatus | null; name: 'email.delivered' | 'email.bounced'; bounceType?: BounceType; warning?: DomainWarning },
  provider: ProviderReport,
  patch: Partial<RecipientRow> = {},
): Promise<EventPayload> {
  const final = outcome.status !== null;
  if (final) await setStatus(tx, t, outcome.status!, { last_response: provider.response, last_mx: provider.reporting_mta, ...patch });
  const finished = { t, name: outcome.name, provider, bounceType: outcome.bounceType, ...(outcome.warning ? { warning: outcome.warning } : {}) };
  const [payload] = await recordFinished(tx, final ? [] : [t.message.id], [finished], {
    messagesLocked: final,
  });
  return payload!;
}

/**
 * A bounce. `final` marks the recipient bounced (a later report wins over `delivered`); a delay
 * report is not final and leaves our own retries alone. Only a permanent bounce suppresses.
 */
export function recordBounce(
  tx: Tx,
  t: Target,
  bounce: { bounceType: BounceType; final: boolean; status?: RecipientStatus; warning?: DomainWarning },
  provider: ProviderReport,
  patch: Partial<RecipientRow> = {},
): Promise<EventPayload> {
  const outcome = { status: bounce.final ? (bounce.status ?? 'bounced') : null, name: 'email.bounced' as const, bounceType: bounce.bounceType };
  return recordReported(tx, t, bounce.warning ? { ...outcome, warning: bounce.warning } : outcome, provider, patch);
}

/**
 * What follows a batch of recipient rows the caller has already written (delivery records many
 * attempts at once): their messages' derived statuses, suppression on a permanent bounce, and
 * one event each for those that finished, all in the caller's transaction. The message rows are
 * locked once, in id order, for both the derivation and the events; `messagesLocked`: the
 * caller's earlier statement took those locks, and the derivation then goes in one round trip
 * with the events' first read. A bounce's `warning` is raised on its sending domain (once per
 * domain and code in a batch); the recipient is not suppressed for it.
 */
export async function recordFinished(
  tx: Tx,
  messageIds: number[],
  finished: { t: Target; name: 'email.delivered' | 'email.bounced'; provider: ProviderReport; bounceType?: BounceType; warning?: DomainWarning }[],
  options: { messagesLocked?: boolean } = {},
): Promise<EventPayload[]> {
  let derivations: Statement[] = [];
  if (options.messagesLocked) derivations = lockedStatusDerivations(tx, messageIds);
  else await deriveMessageStatuses(tx, messageIds);
  for (const f of finished) if (f.bounceType === 'permanent') await suppress(tx, f.t, 'bounce');
  // One upsert per domain and code, in a fixed order: two batches on PostgreSQL lock the same
  // warning rows in the same order and so cannot deadlock on them.
  const warnings = new Map<string, { workspaceId: number; domain: string; code: string; message: string; at: number }>();
  for (const f of finished) {
    if (!f.warning) continue;
    const w = { workspaceId: f.t.message.workspace_id, domain: f.t.message.domain, code: f.warning.code, message: f.warning.message, at: f.t.at };
    warnings.set(JSON.stringify([w.workspaceId, w.domain, w.code]), w);
  }
  for (const key of [...warnings.keys()].sort()) await reputationRepo.warn(tx, warnings.get(key)!);
  return recordEvents(
    tx,
    finished.map((f) => event(f.t, f.name, f.provider, f.bounceType)),
    { messagesLocked: true, alongside: derivations },
  );
}

export async function recordComplaint(tx: Tx, t: Target, provider: ProviderReport) {
  await suppress(tx, t, 'complaint');
  return recordEvent(tx, event(t, 'email.complained', provider));
}

export async function recordUnsubscribe(tx: Tx, t: Target, provider: ProviderReport) {
  await suppress(tx, t, 'unsubscribe');
  return recordEvent(tx, event(t, 'email.unsubscribed', provider));
}

/** A pixel load or a followed link: an event only, the recipient's status stays as it is. */
export async function recordEngagement(tx: Tx, t: Target, name: 'email.opened' | 'email.clicked', provider: ProviderReport, url?: string) {
  return recordEvent(tx, { ...event(t, name, provider), ...(url !== undefined ? { url } : {}) });
}
