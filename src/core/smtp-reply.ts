/** An SMTP reply as data: reply code, enhanced status (RFC 3463) and text. */
export interface Reply {
  code: number;
  status: string;
  text: string;
}

/** The error an SMTP listener answers with (smtp-server reads `responseCode` and `message`). */
export class SmtpReplyError extends Error {
  readonly responseCode: number;
  constructor(
    readonly reply: Reply,
    readonly reason: string,
  ) {
    super(`${reply.status} ${reply.text}`);
    this.name = 'SmtpReplyError';
    this.responseCode = reply.code;
  }
}
