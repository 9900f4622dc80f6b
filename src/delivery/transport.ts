import type { GroupLimit } from './connection-pool.ts';

/** The outbound SMTP port: one transaction per call, connections managed behind it. */

export interface SmtpSendRequest {
  /** The MX host (a name or an address); ignored in relay mode. */
  host: string;
  port: number;
  /** `from` is the VERP envelope sender; an empty string sends the null sender `<>`. */
  envelope: { from: string; to: string };
  raw: Buffer;
  /** The address to send from and the name to greet with (SPEC §12); none: the kernel's choice and `server.hostname`. */
  source?: { address: string; ehlo: string };
  /** The destination group: its connections are capped together and closed after `perConnection` messages. */
  group?: GroupLimit;
  /** Asked once a connection is ready, right before MAIL FROM: a reason not to send now (a suspended group, no pacing slot). */
  ready?: () => Promise<string | null>;
  /** Whether the connection must be closed after this result, whatever it was (a `reconnect-later` reply). */
  closeAfter?: (result: SmtpSendResult) => boolean;
  /**
   * STARTTLS with a certificate valid for `host` (an MTA-STS policy in `enforce`), whatever
   * `delivery.tls` says; such a connection is never shared with unverified ones.
   */
  verifyTls?: boolean;
}

/**
 * How the connection a reply came on was protected: no TLS, TLS (`problem`: why its certificate
 * would not pass a check for the host, or null when it would), checked when the send asked so.
 */
export interface SessionTls {
  secure: boolean;
  verified: boolean;
  problem: string | null;
}

export type SmtpStage = 'connect' | 'tls' | 'ehlo' | 'auth' | 'mail' | 'rcpt' | 'data' | 'timeout';

export type SmtpSendResult =
  /** The remote server took responsibility for the message: a 2xx reply after DATA. */
  | { ok: true; code: number; response: string; host: string; tls?: SessionTls }
  | {
      ok: false;
      stage: SmtpStage;
      /** The reply code when the server answered, null for network failures and timeouts. */
      code: number | null;
      response: string;
      host: string;
      /** True for 4xx replies, timeouts, network failures and our own TLS/AUTH trouble. */
      temporary: boolean;
      /** Nothing was sent: `ready` said why not. */
      notSent?: true;
      /** Set once a session was open: how it was protected. */
      tls?: SessionTls;
    };

export interface SmtpTransport {
  /**
   * Set when the transport takes every message to one place whatever the recipient's domain
   * (the sandbox inbox): the pipeline then skips the MX lookup, as it does for a relay.
   */
  readonly fixedDestination?: string;
  send(req: SmtpSendRequest): Promise<SmtpSendResult>;
  /** Closes idle connections now and the others once their transaction ends. */
  close(): Promise<void>;
  stats(): { open: number; perHost: Record<string, number> };
}

export type SmtpSendFailure = Extract<SmtpSendResult, { ok: false }>;
