import { domainWarning, type ParsedReport, type ReportRecipient } from '../bounces/index.ts';
import type { BounceType, ProviderReport } from '../events/record.ts';
import type { InboundOutcome, InboundProof } from '../store/inbound.ts';
import type { DomainWarning } from '../messages/outcomes.ts';
import type { MessageRow, RecipientRow } from '../store/messages.ts';
import type { InboundTarget } from './policy.ts';

/**
 * What a report does, decided without I/O from the parsed report and what it was correlated
 * with. Effects need proof that the report is about our mail and about that
 * recipient, and apply only to a recipient we actually tried to deliver to.
 */

export interface Correlation {
  /** How the report was tied to our mail; null when it was not. */
  proof: InboundProof | null;
  message: MessageRow | null;
  /**
   * The one recipient row the proof names: a token's (VERP, unsubscribe), or the only recipient
   * of a message found by its Message-ID. Null when the proof names no recipient (a Message-ID
   * of a message sent to several): the report is then stored with no effect.
   */
  pinned: RecipientRow | null;
  /** Why there is no proof or no recipient, for the stored summary. */
  note: string;
}

export type Effect =
  | { type: 'bounce'; recipient: RecipientRow; bounceType: BounceType; final: boolean; provider: ProviderReport; warning?: DomainWarning }
  | { type: 'complaint'; recipient: RecipientRow; provider: ProviderReport }
  | { type: 'unsubscribe'; recipient: RecipientRow; provider: ProviderReport };

export interface Plan {
  outcome: InboundOutcome;
  effects: Effect[];
  summary: string;
}

export interface PlanContext {
  target: InboundTarget;
  mailFrom: string;
  remoteIp: string;
  /** `User-Agent`/`X-Mailer` of the mail itself (for a mailto unsubscribe). */
  userAgent: string | null;
  /** Our `server.hostname`, the reporting MTA of an unsubscribe we observed ourselves. */
  hostname: string;
}

// RFC 5965 §7.3 feedback types: abuse, fraud, virus and other are complaints, opt-out an
// unsubscribe; the rest are stored without effect.
const COMPLAINT_TYPES = new Set(['abuse', 'fraud', 'virus', 'other']);

const none = (outcome: InboundOutcome, summary: string): Plan => ({ outcome, effects: [], summary });

/** Addresses a report names, as the count and the first few: a report may name thousands, and the summary is stored and logged. */
const NAMED_SHOWN = 5;
function named(addresses: string[]): string {
  if (addresses.length === 0) return 'nobody';
  const shown = addresses
    .slice(0, NAMED_SHOWN)
    .map((a) => a.slice(0, 254))
    .join(', ');
  if (addresses.length <= NAMED_SHOWN) return shown;
  return `${addresses.length} addresses (${shown} and ${addresses.length - NAMED_SHOWN} more)`;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The row a report's recipients name, among the one the proof pins: the report may name it (or,
 * for a redacted complaint, nobody), never another address.
 */
function matchRow(named: string[], pinned: RecipientRow, allowUnnamed: boolean): RecipientRow | null {
  if (named.length === 0) return allowUnnamed ? pinned : null;
  return named.some((a) => same(a, pinned.address)) ? pinned : null;
}

// Statuses of a recipient we have not tried to deliver to: nothing about it can have come back.
// A queued row with attempts behind it was deferred and is waiting for its next try.
const NOT_SENT = new Set(['held', 'scheduled', 'queued', 'suppressed', 'canceled']);

/** Whether we ever handed mail for this recipient to a remote server. */
export function attempted(row: RecipientRow): boolean {
  return !NOT_SENT.has(row.status) || row.attempts > 0;
}

function bouncePlan(report: ParsedReport, pinned: RecipientRow): Plan {
  // A success DSN (Action: delivered/relayed/expanded) lists no failed recipient.
  const failed = report.recipients.filter((r) => r.action === 'failed' || r.action === 'delayed');
  if (failed.length === 0) return none('no_effect', 'delivery report without a failed or delayed recipient');
  const effects: Effect[] = [];
  const seen = new Set<number>();
  for (const r of failed) {
    // A forwarded address fails under its new name; Original-Recipient still names ours.
    const named = r.originalRecipient ? [r.address, r.originalRecipient] : [r.address];
    const row = matchRow(named, pinned, false);
    if (!row || seen.has(row.id)) continue;
    seen.add(row.id);
    const provider = bounceProvider(report, r);
    const warning =
      r.action === 'failed' ? domainWarning({ reason: r.reason, status: r.status, response: provider.response }, provider.reporting_mta || 'the receiver') : null;
    effects.push({ type: 'bounce', recipient: row, bounceType: r.bounceType, final: r.action === 'failed', provider, ...(warning ? { warning } : {}) });
  }
  if (effects.length === 0) return none('no_effect', `report names ${named(failed.map((r) => r.address))}, not a recipient it proves`);
  return { outcome: 'applied', effects, summary: effects.map(describe).join('; ') };
}

function bounceProvider(report: ParsedReport, r: ReportRecipient): ProviderReport {
  return {
    response: r.response || r.diagnostic,
    reporting_mta: report.reportingMta ?? r.remoteMta ?? '',
    status: r.status,
    smtp_code: r.smtpCode,
  };
}

function complaintPlan(report: ParsedReport, pinned: RecipientRow, ctx: PlanContext): Plan {
  const type = report.feedbackType ?? 'other';
  const optOut = type === 'opt-out';
  if (!optOut && !COMPLAINT_TYPES.has(type)) return none('no_effect', `feedback type ${type}: stored, no event`);
  const row = matchRow(
    report.recipients.map((r) => r.address),
    pinned,
    true,
  );
  const rows = row ? [row] : [];
  if (rows.length === 0) {
    return none('no_effect', `complaint names ${named(report.recipients.map((r) => r.address))}, not a recipient it proves`);
  }
  const human = report.humanText.trim();
  const effects = rows.map((recipient): Effect =>
    optOut
      ? {
          type: 'unsubscribe',
          recipient,
          provider: {
            response: human || 'ARF opt-out report',
            reporting_mta: report.reportingMta ?? ctx.hostname,
            user_agent: report.userAgent,
            ip: report.sourceIp,
          },
        }
      : { type: 'complaint', recipient, provider: { response: human, reporting_mta: report.reportingMta ?? '', feedback_type: type } },
  );
  return { outcome: 'applied', effects, summary: effects.map(describe).join('; ') };
}

function unsubscribePlan(report: ParsedReport, recipient: RecipientRow, ctx: PlanContext): Plan {
  // An out-of-office answer to the unsubscribe address or a bounce sent to it is nobody's request.
  if (report.kind === 'autoreply') return none('no_effect', 'auto-reply sent to the unsubscribe address');
  if (ctx.mailFrom === '') return none('no_effect', 'null-sender mail to the unsubscribe address');
  const effect: Effect = {
    type: 'unsubscribe',
    recipient,
    provider: {
      response: `unsubscribe request mailed to ${ctx.target.address} from ${ctx.mailFrom}`,
      reporting_mta: ctx.hostname,
      user_agent: ctx.userAgent,
      ip: ctx.remoteIp,
    },
  };
  return { outcome: 'applied', effects: [effect], summary: describe(effect) };
}

function describe(e: Effect): string {
  if (e.type === 'bounce') {
    const suppressed = e.bounceType === 'permanent' ? ', suppressed' : '';
    return `email.bounced ${e.bounceType}${e.final ? '' : ' (delayed)'} for ${e.recipient.address}${suppressed}`;
  }
  return `email.${e.type === 'complaint' ? 'complained' : 'unsubscribed'} for ${e.recipient.address}, suppressed`;
}

export function planEffects(report: ParsedReport, c: Correlation, ctx: PlanContext): Plan {
  if (ctx.target.kind === 'postmaster') return none('no_effect', 'mail to postmaster is stored for the operator');
  if (!c.proof) return none('uncorrelated', c.note);
  const pinned = c.pinned;
  if (!pinned) return none('no_effect', c.note);
  // A report about mail we never sent to that recipient is forged or about someone else's mail.
  if (!attempted(pinned)) return none('no_effect', `${pinned.address} was never attempted (${pinned.status}): no effect`);
  if (ctx.target.kind === 'unsubscribe') return unsubscribePlan(report, pinned, ctx);
  switch (report.kind) {
    case 'bounce':
      return bouncePlan(report, pinned);
    case 'complaint':
      return complaintPlan(report, pinned, ctx);
    case 'autoreply':
      return none('no_effect', 'auto-reply (RFC 3834), not a bounce');
    default:
      return none('no_effect', 'not a delivery or feedback report');
  }
}
