import { SmtpReplyError } from '../core/smtp-reply.ts';

/**
 * Every reply the inbound listener gives on purpose, as data: reply code, enhanced status
 * (RFC 3463) and text. `smtpError` turns one into the error smtp-server answers with.
 */
export const REPLIES = {
  // RCPT only for our return-path addresses; everything else, never a relay.
  relayDenied: { code: 550, status: '5.7.1', text: 'Relaying denied: this server accepts mail only for its return-path addresses' },
  // A b+/u+ address whose token does not verify: forged, altered, or signed by a retired key.
  unknownAddress: { code: 550, status: '5.7.1', text: 'Unknown return-path address' },
  // A receiving domain's recipient that no route matches: no such mailbox (RFC 3463 X.1.1).
  noRoute: { code: 550, status: '5.1.1', text: 'No such recipient here' },
  // A message for a route over inbound.maxSize: refused whole, nothing kept (RFC 3463 X.3.4).
  tooBig: { code: 552, status: '5.3.4', text: 'Message too big' },
  // mailparser could not read the message at all, or not within its time budget.
  unreadable: { code: 554, status: '5.6.0', text: 'The message could not be read' },
  // %-hacks, bang paths, quoted local parts and source routes are relay tricks (RFC 5321 §3.6).
  routingRefused: { code: 550, status: '5.7.1', text: 'Source routing and quoted local parts are not accepted' },
  // RFC 5321 §4.5.3.1.8 lets a server refuse recipients beyond its limit with a 452.
  tooManyRecipients: { code: 452, status: '4.5.3', text: 'Too many recipients' },
  tooManyConnections: { code: 421, status: '4.7.0', text: 'Too many connections, try again later' },
  rateLimited: { code: 451, status: '4.7.1', text: 'Too many messages, try again later' },
  // The message could not be read in time (a busy parser); the sender retries.
  parseTimeout: { code: 451, status: '4.3.0', text: 'Temporary failure reading the message, try again later' },
  // The report could not be stored; the sender keeps it and retries.
  storeFailed: { code: 451, status: '4.3.0', text: 'Temporary failure storing the report, try again later' },
  // Every parser worker busy and the queue full: a flood; a genuine sender retries later.
  parserBusy: { code: 451, status: '4.3.2', text: 'Too many reports being processed, try again later' },
} as const;

export type ReplyName = keyof typeof REPLIES;
export function smtpError(name: ReplyName): SmtpReplyError {
  return new SmtpReplyError(REPLIES[name], name);
}
