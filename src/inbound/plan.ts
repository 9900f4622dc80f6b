import type { ParsedReport, ReportRecipient } from '../bounces/index.ts';
import type { BounceType, ProviderReport } from '../events/record.ts';
import type { InboundOutcome, InboundProof } from '../store/inbound.ts';
import type { MessageRow, RecipientRow } from '../store/messages.ts';
import type { InboundTarget } from './policy.ts';

/**
 * What a report does, decided without I/O from the parsed report and what it was correlated
 * with (SPEC §5): effects need proof that the report is about our mail.
 */

export interface Correlation {
  proof: InboundProof | null;
  message: MessageRow | null;
  /** The recipient row a token names (VERP, unsubscribe); reports naming others are ignored. */
  pinned: RecipientRow | null;
  /** Every recipient of the message, when the proof is its Message-ID. */
  recipients: RecipientRow[];
  /** Why there is no proof, for the stored summary. */
  note: string;
}

export type Effect =
  | { type: 'bounce'; recipient: RecipientRow; bounceType: BounceType; final: boolean; provider: ProviderReport }
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

// RFC 5965 §7.3 feedback types; SPEC §5 says which of them act.
const COMPLAINT_TYPES = new Set(['abuse', 'fraud', 'virus', 'other']);

const none = (outcome: InboundOutcome, summary: string): Plan => ({ outcome, effects: [], summary });

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The rows a report's recipients name. A token pins one row: the report may name it (or, for a
 * redacted complaint, nobody), never another address. A Message-ID gives the message: each
 * named address is looked up among its recipients; a complaint naming nobody about a message
 * with exactly one recipient can only be about that one.
 */
function matchRows(named: string[], c: Correlation, allowUnnamed: boolean): RecipientRow[] {
  if (c.pinned) {
    if (named.length === 0) return allowUnnamed ? [c.pinned] : [];
    return named.some((a) => same(a, c.pinned!.address)) ? [c.pinned] : [];
  }
  if (named.length === 0) return allowUnnamed && c.recipients.length === 1 ? [c.recipients[0]!] : [];
  const rows = new Map<number, RecipientRow>();
  for (const a of named) {
    const row = c.recipients.find((r) => same(r.address, a));
    if (row) rows.set(row.id, row);
  }
  return [...rows.values()];
}

function bouncePlan(report: ParsedReport, c: Correlation): Plan {
  // A success DSN (Action: delivered/relayed/expanded) lists no failed recipient.
  const failed = report.recipients.filter((r) => r.action === 'failed' || r.action === 'delayed');
  if (failed.length === 0) return none('no_effect', 'delivery report without a failed or delayed recipient');
  const effects: Effect[] = [];
  const seen = new Set<number>();
  for (const r of failed) {
    // A forwarded address fails under its new name; Original-Recipient still names ours.
    const named = r.originalRecipient ? [r.address, r.originalRecipient] : [r.address];
    const [row] = matchRows(named, c, false);
    if (!row || seen.has(row.id)) continue;
    seen.add(row.id);
    effects.push({ type: 'bounce', recipient: row, bounceType: r.bounceType, final: r.action === 'failed', provider: bounceProvider(report, r) });
  }
  if (effects.length === 0) return none('no_effect', `report names ${failed.map((r) => r.address).join(', ')}, not a recipient it proves`);
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

function complaintPlan(report: ParsedReport, c: Correlation, ctx: PlanContext): Plan {
  const type = report.feedbackType ?? 'other';
  const optOut = type === 'opt-out';
  if (!optOut && !COMPLAINT_TYPES.has(type)) return none('no_effect', `feedback type ${type}: stored, no event`);
  const rows = matchRows(report.recipients.map((r) => r.address), c, true);
  if (rows.length === 0) {
    return none('no_effect', `complaint names ${report.recipients.map((r) => r.address).join(', ') || 'nobody'}, not a recipient it proves`);
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

function unsubscribePlan(report: ParsedReport, c: Correlation, ctx: PlanContext): Plan {
  // An out-of-office answer to the unsubscribe address or a bounce sent to it is nobody's request.
  if (report.kind === 'autoreply') return none('no_effect', 'auto-reply sent to the unsubscribe address');
  if (ctx.mailFrom === '') return none('no_effect', 'null-sender mail to the unsubscribe address');
  const recipient = c.pinned!;
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
  if (ctx.target.kind === 'unsubscribe') return unsubscribePlan(report, c, ctx);
  switch (report.kind) {
    case 'bounce':
      return bouncePlan(report, c);
    case 'complaint':
      return complaintPlan(report, c, ctx);
    case 'autoreply':
      return none('no_effect', 'auto-reply (RFC 3834), not a bounce');
    default:
      return none('no_effect', 'not a delivery or feedback report');
  }
}
