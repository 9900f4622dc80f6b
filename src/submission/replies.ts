import type { ErrorCode, ServiceError } from '../core/errors.ts';
import { SmtpReplyError } from '../core/smtp-reply.ts';

/**
 * Every reply the submission listener gives on purpose: code, enhanced status (RFC 3463) and
 * text. Replies that name something (a domain, a limit) take it as `detail`.
 */
export const SUBMISSION_REPLIES = {
  // RFC 4954 §6: MAIL without AUTH, from an address outside submission.trustedNetworks.
  authRequired: { code: 530, status: '5.7.0', text: 'Authentication required' },
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
  tooManyConnections: { code: 421, status: '4.7.0', text: 'Too many connections from this address, try again later' },
  storeFailed: { code: 451, status: '4.3.0', text: 'Temporary failure storing the message, try again later' },
} as const;

export type SubmissionReply = keyof typeof SUBMISSION_REPLIES;

/** The SMTP side of each service error, for what the shared accept pipeline throws. */
const SERVICE_ERROR_REPLIES: Record<ErrorCode, { code: number; status: string }> = {
  BAD_REQUEST: { code: 501, status: '5.5.4' },
  UNAUTHORIZED: { code: 535, status: '5.7.8' },
  FORBIDDEN: { code: 550, status: '5.7.1' },
  NOT_FOUND: { code: 550, status: '5.1.1' },
  // An idempotency key already used for a different request over HTTP: retrying cannot help.
  CONFLICT: { code: 550, status: '5.7.0' },
  PAYLOAD_TOO_LARGE: { code: 552, status: '5.3.4' },
  UNSUPPORTED_MEDIA_TYPE: { code: 554, status: '5.6.0' },
  VALIDATION: { code: 550, status: '5.7.1' },
  RATE_LIMITED: { code: 451, status: '4.7.1' },
  UNAVAILABLE: { code: 421, status: '4.3.2' },
};

/** The error smtp-server answers with; `detail` replaces the reply's generic text. */
export function refuse(name: SubmissionReply, detail?: string): SmtpReplyError {
  const reply = SUBMISSION_REPLIES[name];
  return new SmtpReplyError({ ...reply, text: detail ?? reply.text }, name);
}

/** A service error from the shared accept pipeline, as the SMTP reply its code maps to. */
export function fromServiceError(err: ServiceError): SmtpReplyError {
  return new SmtpReplyError({ ...SERVICE_ERROR_REPLIES[err.code], text: err.message.replace(/`/g, '') }, err.code);
}
