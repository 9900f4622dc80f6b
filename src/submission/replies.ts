import { ERROR_CODES, ServiceError } from '../core/errors.ts';
import { SmtpReplyError } from '../inbound/replies.ts';

/**
 * Every reply the submission listener gives on purpose: code, enhanced status (RFC 3463) and
 * text. Replies that name something (a domain, a limit) take it as `detail`.
 */
export const SUBMISSION_REPLIES = {
  badCredentials: { code: 535, status: '5.7.8', text: 'Authentication credentials invalid: the password must be an API key' },
  // RFC 4954 §6: the mechanism would send the key in clear.
  tlsFirst: { code: 538, status: '5.7.11', text: 'Encryption required: issue STARTTLS before AUTH' },
  tooManyAuthFailures: { code: 454, status: '4.7.0', text: 'Too many failed authentication attempts from this address, try again later' },
  senderDomain: { code: 550, status: '5.7.1', text: 'Sender domain not allowed' },
  badAddress: { code: 501, status: '5.1.3', text: 'Bad address syntax' },
  badMessage: { code: 550, status: '5.6.0', text: 'Message not accepted' },
  rateLimited: { code: 451, status: '4.7.1', text: 'Rate limit exceeded, try again later' },
  // RFC 5321 §4.5.3.1.8: a server refuses recipients beyond its limit with a 452.
  tooManyRecipients: { code: 452, status: '4.5.3', text: 'Too many recipients: at most 100 per message' },
  tooBig: { code: 552, status: '5.3.4', text: 'Message too big' },
  storeFailed: { code: 451, status: '4.3.0', text: 'Temporary failure storing the message, try again later' },
} as const;

export type SubmissionReply = keyof typeof SUBMISSION_REPLIES;

/** The error smtp-server answers with; `detail` replaces the reply's generic text. */
export function refuse(name: SubmissionReply, detail?: string): SmtpReplyError {
  const reply = SUBMISSION_REPLIES[name];
  return new SmtpReplyError({ ...reply, text: detail ?? reply.text }, name);
}

/** A service error from the shared accept pipeline, as the SMTP reply its code maps to. */
export function fromServiceError(err: ServiceError): SmtpReplyError {
  const code = ERROR_CODES[err.code].smtp;
  const status = err.code === 'VALIDATION' || err.code === 'FORBIDDEN' ? '5.7.1' : code >= 500 ? '5.0.0' : '4.0.0';
  return new SmtpReplyError({ code, status, text: err.message.replace(/`/g, '') }, err.code);
}
