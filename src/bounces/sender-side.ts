// Replies that are about the sender, not the recipient: the receiver could not authenticate
// our mail (SPF, DKIM or DMARC failed or did not align, RFC 7372 X.7.20-26, RFC 8617 X.7.29,
// Microsoft's 5.7.509 and 5.7.515), our sending address has no matching reverse DNS name
// (X.7.25), or our envelope sender's domain has a null MX (RFC 7505 X.7.27). They are `blocked`
// bounces, which never suppress the recipient: retrying the address after the sender's DNS is
// fixed will work. Each raises a warning on the sending domain instead.

import type { ReplyClassification } from './types.ts';

export interface SenderSideWarning {
  /** Stable word for the warning, one per kind of sender fault. */
  code: 'sender_authentication' | 'sender_reverse_dns' | 'sender_null_mx';
  /** What the operator should do about it. */
  advice: string;
}

const WARNINGS: Record<SenderSideWarning['code'], string> = {
  sender_authentication:
    "a receiver refused mail because the sending domain's SPF, DKIM or DMARC did not pass or did not align with the From domain; `mailsvc doctor` names the records to publish",
  sender_reverse_dns:
    "a receiver refused mail because the sending address's reverse DNS (PTR) is missing or does not match its EHLO name; `mailsvc doctor` checks each address",
  sender_null_mx: "a receiver refused mail because the envelope sender's domain publishes a null MX (RFC 7505), so bounces could not reach it",
};

/** The warning a classified reply raises on the sending domain, or null when it is about the recipient or the message. */
export function senderSideWarning(c: Pick<ReplyClassification, 'reason' | 'status'>): SenderSideWarning | null {
  const code = /^[45]\.7\.27$/.test(c.status)
    ? 'sender_null_mx'
    : c.reason === 'auth_failure'
      ? 'sender_authentication'
      : c.reason === 'no_ptr'
        ? 'sender_reverse_dns'
        : null;
  return code === null ? null : { code, advice: WARNINGS[code] };
}

/** The warning as the sending domain shows it: what to do, and the reply that said so (first 500 characters). */
export function domainWarning(c: { reason: string; status: string; response: string }, host: string): { code: string; message: string } | null {
  const w = senderSideWarning(c);
  return w ? { code: w.code, message: `${w.advice}. ${host} replied: ${c.response.replace(/\s+/g, ' ').slice(0, 500)}` } : null;
}
