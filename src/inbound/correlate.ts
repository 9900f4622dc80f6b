import type { ParsedReport } from '../bounces/index.ts';
import { verpRecipientId } from '../delivery/verp.ts';
import type { Conn } from '../store/db.ts';
import { inboundRepo } from '../store/inbound.ts';
import type { TokenCodec } from '../tokens/index.ts';
import type { Correlation } from './plan.ts';
import type { InboundTarget } from './policy.ts';

const uncorrelated = (note: string): Correlation => ({ proof: null, message: null, pinned: null, note });

async function byRecipientId(db: Conn, id: number, proof: 'verp' | 'unsubscribe'): Promise<Correlation> {
  const found = await inboundRepo.recipientWithMessage(db, id);
  if (!found) return uncorrelated(`token names recipient ${id}, which no longer exists`);
  return { proof, message: found.message, pinned: found.recipient, note: '' };
}

/**
 * Ties a report to our mail and to one recipient of it, with proof: the signed token
 * of the address it came to, else — for fbl@ — the VERP sender in the quoted original's
 * Return-Path, else our exact original Message-ID, which pins a recipient only when the message
 * had one. Every recipient (Bcc included) sees the Message-ID, so for a message to several it
 * proves the report is about our mail, not about whom: one recipient could otherwise report the
 * others. Nothing weaker (From: domain, subject, a similar Message-ID) counts: anyone can write
 * those into a fake report.
 */
export async function correlate(db: Conn, target: InboundTarget, report: ParsedReport, verp: TokenCodec): Promise<Correlation> {
  switch (target.kind) {
    case 'verp':
      return byRecipientId(db, target.recipientId, 'verp');
    case 'unsubscribe':
      return byRecipientId(db, target.recipientId, 'unsubscribe');
    case 'postmaster':
      return uncorrelated('mail to postmaster is not correlated');
    case 'fbl':
      break;
  }
  const returnPath = report.originalReturnPath ? verpRecipientId(verp, report.originalReturnPath) : null;
  if (returnPath !== null && returnPath <= BigInt(Number.MAX_SAFE_INTEGER)) {
    const c = await byRecipientId(db, Number(returnPath), 'verp');
    if (c.proof) return c;
  }
  const messageId = report.originalMessageId;
  if (!messageId) return uncorrelated('no VERP Return-Path or Message-ID of ours in the report');
  const messages = await inboundRepo.messagesByMessageId(db, messageId);
  if (messages.length === 0) return uncorrelated(`Message-ID ${messageId} is not one of ours`);
  if (messages.length > 1) return uncorrelated(`Message-ID ${messageId} matches more than one message`);
  const message = messages[0]!;
  const recipients = await inboundRepo.recipientsOf(db, message.id, 2);
  if (recipients.length !== 1) {
    return { proof: 'message_id', message, pinned: null, note: `Message-ID ${messageId} is of a message with several recipients, so it proves none of them` };
  }
  return { proof: 'message_id', message, pinned: recipients[0]!, note: '' };
}
