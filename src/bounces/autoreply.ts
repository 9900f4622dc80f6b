// RFC 3834 automatic responses (vacation, out of office). They are never bounces, but bounces
// carry some of the same marks ("Auto-Submitted: auto-replied" on Postfix and Exim notices), so
// a message only counts as an auto-reply once it has been ruled out as a failure notice.

import { decodeWords, header, type Header } from './mime.ts';

// Subjects that mail clients and servers put on vacation replies, in the languages seen.
// "Automatic reply: Nyaan" (Exchange), "Out of Office: ...", "Auto: ..." (Notes), "Abwesenheitsnotiz"
const AUTOREPLY_SUBJECT =
  /^(?:auto(?:matic)?[ -]?(?:reply|response|antwort)|out of (?:the )?office|auto:|vacation|abwesenheit|absence|r[ée]ponse automatique|risposta automatica|respuesta autom[aá]tica|自動応答|不在)/i;

// Mail clients send an unsubscribe request to a List-Unsubscribe mailto address on their own
// and mark it automatic (Apple Mail adds X-Apple-Unsubscribe; others Auto-Submitted). It is the
// reader's opt-out (RFC 2369), not a vacation reply.
const UNSUBSCRIBE_SUBJECT = /^unsubscribe\b/i;

export function isUnsubscribeRequest(top: Header[]): boolean {
  if (header(top, 'x-apple-unsubscribe')) return true;
  return UNSUBSCRIBE_SUBJECT.test(decodeWords(header(top, 'subject') ?? '').trim());
}

export function isAutoReply(top: Header[]): boolean {
  if (isUnsubscribeRequest(top)) return false;
  const autoSubmitted = (header(top, 'auto-submitted') ?? '').toLowerCase();
  if (autoSubmitted.startsWith('auto-replied')) return true;
  if (header(top, 'x-autoreply') || header(top, 'x-autorespond') || header(top, 'x-autoresponder')) return true;
  const precedence = (header(top, 'precedence') ?? '').toLowerCase();
  if (precedence === 'auto_reply') return true;
  const subject = decodeWords(header(top, 'subject') ?? '').trim();
  return AUTOREPLY_SUBJECT.test(subject);
}
