import type { Logger } from '../core/ports.ts';
import type { RecipientRow } from '../store/messages.ts';
import { senderSideWarning } from '../bounces/index.ts';
import type { Recorded, Verdict } from './outcome.ts';

/** `key=value` with the value quoted when it has spaces, so `grep 'outcome=deferred'` just works. */
function kv(fields: Record<string, string | number | null | undefined>): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => {
      const text = String(v).replace(/[\r\n]+/g, ' ');
      return /[\s"]/.test(text) ? `${k}="${text.replace(/"/g, '\\"')}"` : `${k}=${text}`;
    })
    .join(' ');
}

/**
 * One line per delivery outcome, the way Postfix's `status=deferred` lines are grepped: the
 * message field carries every key=value (for people and grep), the structured fields the same
 * (for log pipelines).
 */
export function logOutcome(log: Logger, row: RecipientRow, verdict: Verdict, recorded: Recorded, seconds: number): void {
  const fields = {
    outcome: recorded.outcome,
    email_id: row.message_id,
    recipient_id: row.id,
    to: row.address,
    mx: verdict.host,
    code: 'code' in verdict ? verdict.code : null,
    bounce_type: verdict.kind === 'bounced' ? verdict.bounceType : recorded.outcome === 'failed' ? 'transient' : undefined,
    reason: verdict.kind === 'bounced' ? verdict.reason : undefined,
    // A refusal of our own authentication: the sending domain's warning (GET /domains/{id}).
    sender_warning: verdict.kind === 'bounced' ? senderSideWarning(verdict)?.code : undefined,
    attempt: 'attempts' in recorded ? recorded.attempts : undefined,
    next_at: recorded.outcome === 'deferred' ? new Date(recorded.dueAt).toISOString() : undefined,
    delay: seconds.toFixed(3),
    response: verdict.response,
  };
  const line = kv(fields);
  if (recorded.outcome === 'delivered') log.info(fields, line);
  else log.warn(fields, line);
}
