import { iso, isoOrNull } from '../core/time.ts';
import type { MessageRow, RecipientRow } from '../store/messages.ts';
import { readEnvelope } from './content.ts';

export function messageSummary(row: MessageRow) {
  const env = readEnvelope(row.envelope);
  return {
    id: row.id,
    stream: row.stream,
    status: row.status,
    from: row.from_header,
    to: env.to,
    cc: env.cc,
    bcc: env.bcc,
    reply_to: env.reply_to,
    subject: row.subject,
    tags: env.tags,
    metadata: env.metadata ?? {},
    created_at: iso(row.created_at),
    scheduled_at: isoOrNull(row.scheduled_at),
  };
}

export function messageDetail(row: MessageRow, recipients: RecipientRow[], events: unknown[]) {
  return {
    ...messageSummary(row),
    message_id: row.message_id_header,
    recipients: recipients.map((r) => ({
      address: r.address,
      status: r.status,
      attempts: r.attempts,
      last_response: r.last_response,
      source_address: r.source_address ?? null,
      tls: r.tls ?? null,
      updated_at: iso(r.updated_at),
    })),
    events,
  };
}
