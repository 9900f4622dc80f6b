import type { AuthResults } from './auth.ts';
import type { ReceivedMail } from './received.ts';

/**
 * The `email.received` payload (SPEC §14), as pure functions: what a route's application is
 * POSTed, and what the API shows of a received message.
 */

export interface ReceivedEnvelope {
  from: string;
  to: string[];
}

/** Where an attachment too big to go inline is served: `GET /api/v1/inbound/{id}/attachments/{n}`, n from 0. */
export const attachmentUrl = (baseUrl: string, inboundId: number, n: number): string => `${baseUrl}/api/v1/inbound/${inboundId}/attachments/${n}`;

/** The parsed message as stored and shown by the API: every attachment by URL. */
export function receivedView(input: { id: number; receivedAt: string; envelope: ReceivedEnvelope; mail: ReceivedMail; auth: AuthResults; baseUrl: string }) {
  const { mail } = input;
  return {
    id: input.id,
    received_at: input.receivedAt,
    envelope: input.envelope,
    from: mail.from,
    to: mail.to,
    cc: mail.cc,
    reply_to: mail.reply_to,
    subject: mail.subject,
    message_id: mail.message_id,
    in_reply_to: mail.in_reply_to,
    references: mail.references,
    date: mail.date,
    text: mail.text,
    html: mail.html,
    headers: mail.headers,
    attachments: mail.attachments.map((a, n) => ({
      filename: a.filename,
      content_type: a.content_type,
      size: a.size,
      ...(a.content_id ? { content_id: a.content_id } : {}),
      url: attachmentUrl(input.baseUrl, input.id, n),
    })),
    auth: input.auth,
    spam: null,
  };
}

export type ReceivedView = ReturnType<typeof receivedView>;

/**
 * One route's payload: its recipients in `envelope.to`; attachments inline (base64) when the
 * message is smaller than `inbound.inlineAttachmentBytes`, else by URL.
 */
export function receivedPayload(view: ReceivedView, mail: ReceivedMail, route: { id: number; to: string[] }, inline: boolean): string {
  const { id, received_at, envelope, ...rest } = view;
  return JSON.stringify({
    event: 'email.received',
    id,
    received_at,
    route_id: route.id,
    envelope: { from: envelope.from, to: route.to },
    ...rest,
    attachments: view.attachments.map(({ url, ...a }, n) => (inline ? { ...a, content: Buffer.from(mail.attachments[n]!.content).toString('base64') } : { ...a, url })),
  });
}
