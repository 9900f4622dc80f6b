import { classifyReply, domainWarning } from '../bounces/index.ts';
import type { BounceType, ProviderReport } from '../events/record.ts';
import type { RandomSource } from '../core/ports.ts';
import { recordFinished } from '../messages/outcomes.ts';
import type { Tx } from '../store/db.ts';
import type { MessageRow, RecipientRow } from '../store/messages.ts';
import { queueRepo, type LeasedOutcome, type RecipientTls } from '../store/queue.ts';
import type { Destination } from './mx.ts';
import { nextAttempt, type RetryPolicy } from './retry.ts';
import type { SmtpSendResult } from './transport.ts';

/**
 * What one attempt amounted to, before the retry policy and the lease have their say; `source`:
 * the address it went out from; `tls`: how the connection that answered was protected.
 */
export type Verdict = (
  | { kind: 'delivered'; host: string; code: number; response: string }
  | { kind: 'bounced'; host: string | null; code: number | null; response: string; bounceType: BounceType; reason: string; status: string }
  | { kind: 'deferred'; host: string | null; code: number | null; response: string }
  /** Put back by traffic shaping (a suspended or paced group, a throttling reply): no attempt counted. */
  | { kind: 'shaped'; host: string | null; code: number | null; response: string; until: number }
) & { source?: string | null; tls?: RecipientTls | null };

/** What was written: the recipient's new state, or nothing because another worker owns the row. */
export type Recorded =
  | { outcome: 'delivered' | 'bounced' | 'failed'; attempts: number; provider: ProviderReport; bounceType?: BounceType }
  | { outcome: 'deferred'; attempts: number; dueAt: number }
  | { outcome: 'lease_lost' };

/** "250 2.0.0 Ok: queued" → "2.0.0" (RFC 3463 enhanced code right after the reply code). */
export function enhancedStatus(response: string): string | null {
  const m = /^\d{3}[ -]([245]\.\d{1,3}\.\d{1,3})\b/.exec(response.trim());
  return m ? m[1]! : null;
}

/**
 * A reply from the server we spoke to: 2xx delivered, 5xx a bounce of the classifier's type
 * (a 5xx may still be `transient`, e.g. 552 5.2.2 mailbox full, and is final all the
 * same), anything temporary (4xx, timeouts, dropped connections, our TLS/AUTH trouble) deferred.
 */
export function judgeSend(result: SmtpSendResult): Verdict {
  if (result.ok) return { kind: 'delivered', host: result.host, code: result.code, response: result.response };
  if (result.temporary) return { kind: 'deferred', host: result.host, code: result.code, response: result.response };
  const c = classifyReply({ smtpCode: result.code, text: result.response });
  return { kind: 'bounced', host: result.host, code: result.code, response: result.response, bounceType: c.bounceType, reason: c.reason, status: c.status };
}

/** A destination we could not send to at all: null MX, NXDOMAIN and loops bounce; DNS trouble defers. */
export function judgeDestination(dest: Exclude<Destination, { kind: 'hosts' }>): Verdict {
  if (dest.kind === 'temporary') return { kind: 'deferred', host: null, code: null, response: dest.message };
  const c = classifyReply({ status: dest.status, text: dest.message });
  return { kind: 'bounced', host: null, code: null, response: dest.message, bounceType: c.bounceType, reason: c.reason, status: dest.status };
}

export interface RecordDeps {
  owner: string;
  now: number;
  random: RandomSource;
  policy: RetryPolicy;
  /** `provider.reporting_mta` when no remote host was involved (DNS): we are the reporting MTA. */
  hostname: string;
}

/** One attempt to record: the claimed row, its message and what the attempt amounted to. */
export interface Attempt {
  row: RecipientRow;
  message: Pick<MessageRow, 'id' | 'workspace_id' | 'stream' | 'domain' | 'envelope'>;
  verdict: Verdict;
}

type Finished = Parameters<typeof recordFinished>[2][number];

/** What an attempt will write if its lease still holds: the row's new state, its event, what to report. */
function plan(a: Attempt, deps: RecordDeps): { write: LeasedOutcome; finished: Finished | null; recorded: Recorded } {
  const { row, verdict } = a;
  const attempts = row.attempts + 1;
  const t = { message: a.message, recipient: { id: row.id, address: row.address }, at: deps.now };
  const final = (status: 'delivered' | 'bounced' | 'failed', provider: ProviderReport) =>
    ({
      id: row.id,
      status,
      dueAt: null,
      attempts,
      lastResponse: provider.response,
      lastMx: provider.reporting_mta,
      sourceAddress: verdict.source ?? null,
      tls: verdict.tls ?? null,
    }) satisfies LeasedOutcome;
  const reportingMta = verdict.host ?? deps.hostname;

  if (verdict.kind === 'delivered') {
    const provider = { response: verdict.response, reporting_mta: reportingMta, status: enhancedStatus(verdict.response) ?? '2.0.0', smtp_code: verdict.code };
    return { write: final('delivered', provider), finished: { t, name: 'email.delivered', provider }, recorded: { outcome: 'delivered', attempts, provider } };
  }
  if (verdict.kind === 'bounced') {
    const provider = { response: verdict.response, reporting_mta: reportingMta, status: verdict.status, smtp_code: verdict.code };
    const warning = domainWarning(verdict, reportingMta);
    return {
      write: final('bounced', provider),
      finished: { t, name: 'email.bounced', provider, bounceType: verdict.bounceType, ...(warning ? { warning } : {}) },
      recorded: { outcome: 'bounced', attempts, provider, bounceType: verdict.bounceType },
    };
  }

  if (verdict.kind === 'shaped') {
    // The group was not ready, which says nothing about the recipient: the row waits, its
    // attempts unchanged, and `delivery.maxAge` still ends it.
    const expiresAt = (row.first_due_at ?? row.created_at) + deps.policy.maxAgeSeconds * 1000;
    if (deps.now < expiresAt) {
      const dueAt = Math.min(verdict.until, expiresAt);
      const status = row.attempts > 0 ? 'deferred' : 'queued';
      return {
        write: { id: row.id, status, dueAt, attempts: row.attempts, lastResponse: verdict.response, lastMx: verdict.host ?? row.last_mx, sourceAddress: null },
        finished: null,
        recorded: { outcome: 'deferred', attempts: row.attempts, dueAt },
      };
    }
  }

  const next = nextAttempt(deps.policy, attempts, row.first_due_at ?? row.created_at, deps.now, deps.random);
  if (next.kind === 'retry') {
    return {
      write: {
        id: row.id,
        status: 'deferred',
        dueAt: next.dueAt,
        attempts,
        lastResponse: verdict.response,
        lastMx: verdict.host,
        sourceAddress: verdict.source ?? null,
        tls: verdict.tls ?? null,
      },
      finished: null,
      recorded: { outcome: 'deferred', attempts, dueAt: next.dueAt },
    };
  }
  // RFC 3463 4.4.7 "delivery time expired": the last remote reply stays in `provider`, so the
  // sender can still see why (a DNS failure on the last try keeps the last host that answered).
  const remote = verdict.host !== null || row.last_mx === null ? verdict : { response: row.last_response ?? verdict.response, host: row.last_mx, code: null };
  const provider = { response: remote.response, reporting_mta: remote.host ?? deps.hostname, status: '4.4.7', smtp_code: remote.code };
  return {
    write: final('failed', provider),
    finished: { t, name: 'email.bounced', provider, bounceType: 'transient' },
    recorded: { outcome: 'failed', attempts, provider, bounceType: 'transient' },
  };
}

/**
 * Writes many attempts' outcomes in the caller's transaction, each only while `owner` still
 * holds its row's lease: a row given to another worker reports `lease_lost` and writes nothing.
 * The statements are per batch, not per attempt: the rows in one (lease check folded in), the
 * messages' statuses, the events and their webhook deliveries. Results in input order.
 */
export async function recordVerdicts(tx: Tx, batch: Attempt[], deps: RecordDeps): Promise<Recorded[]> {
  const plans = batch.map((a) => plan(a, deps));
  const held = await queueRepo.finishLeased(
    tx,
    deps.owner,
    plans.map((p) => p.write),
    deps.now,
  );
  const kept = plans.filter((p) => held.has(p.write.id));
  if (kept.length > 0) {
    await recordFinished(
      tx,
      batch.filter((a) => held.has(a.row.id)).map((a) => a.message.id),
      kept.flatMap((p) => (p.finished ? [p.finished] : [])),
      { messagesLocked: true },
    );
  }
  return plans.map((p) => (held.has(p.write.id) ? p.recorded : { outcome: 'lease_lost' }));
}
