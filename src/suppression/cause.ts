import { classify } from '../bounces/classify.ts';
import { iso } from '../core/time.ts';
import type { Conn } from '../store/db.ts';
import { eventsRepo } from '../store/events.ts';
import type { SuppressionRow } from '../store/suppressions.ts';

/** Why an address is on a list: the event that put it there, as the report told it. */
export interface SuppressionCause {
  event: string;
  occurred_at: string;
  /** For a bounce: permanent, transient or blocked. */
  bounce_type: string | null;
  /** The receiving server's (or the complaint report's) own words. */
  response: string;
  reporting_mta: string;
  /** For a bounce: the enhanced status code, the classifier's reason word and the rules that decided it. */
  status: string | null;
  reason: string | null;
  decided_by: string[];
  /** For a complaint: the ARF feedback type. */
  feedback_type: string | null;
}

const EVENT_OF = { bounce: 'email.bounced', complaint: 'email.complained', unsubscribe: 'email.unsubscribed' } as const;

interface Payload {
  event: string;
  occurred_at: string;
  recipient: string;
  bounce_type?: string;
  provider?: { response?: string; reporting_mta?: string; status?: string; smtp_code?: number; feedback_type?: string };
}

/**
 * The last event of the entry's message, about the entry's address, of the kind its reason names;
 * null for a manual entry, or once retention pruned the events. A bounce is explained again by
 * the classifier (`mailsvc bounce explain` reads the same way).
 */
export async function suppressionCause(db: Conn, row: SuppressionRow): Promise<SuppressionCause | null> {
  const wanted = EVENT_OF[row.reason as keyof typeof EVENT_OF];
  if (!wanted || row.email_id === null) return null;
  const payloads = (await eventsRepo.payloadsOf(db, row.email_id)).map((p) => JSON.parse(p) as Payload);
  const event = payloads.filter((p) => p.event === wanted && p.recipient.toLowerCase() === row.address).at(-1);
  if (!event) return null;
  const provider = event.provider ?? {};
  const explained =
    wanted === 'email.bounced' ? classify({ text: provider.response ?? '', status: provider.status ?? null, smtpCode: provider.smtp_code ?? null }) : null;
  return {
    event: event.event,
    occurred_at: event.occurred_at ?? iso(row.created_at),
    bounce_type: event.bounce_type ?? null,
    response: provider.response ?? '',
    reporting_mta: provider.reporting_mta ?? '',
    status: explained ? explained.status : null,
    reason: explained ? explained.reason : null,
    decided_by: explained ? explained.explanation.decidedBy : [],
    feedback_type: provider.feedback_type ?? null,
  };
}
