import { isAscii } from 'node:buffer';
import { isIP } from 'node:net';
import type { Transform } from 'node:stream';
import { checkServerIdentity, type ConnectionOptions, type SecureContext, type TLSSocket } from 'node:tls';
import SMTPConnection, { type SMTPConnectionOptions } from 'nodemailer/lib/smtp-connection';
import type { NodemailerError } from 'nodemailer/lib/errors';
import { withFastStuffing } from './dot-stuffing.ts';
import type { SessionTls, SmtpSendFailure, SmtpSendResult, SmtpStage } from './transport.ts';

/** How to reach and greet one server; `address` is what we connect to, `host` what we verify. */
export interface SessionTarget {
  host: string;
  address: string;
  port: number;
}

export interface SessionOptions {
  heloName: string;
  /** The local address the connection binds (a sending address of SPEC §12); none: the kernel picks. */
  localAddress?: string | undefined;
  /** `ignore` is the plaintext retry after a failed opportunistic handshake. */
  tls: 'opportunistic' | 'required' | 'ignore';
  /** Extra trust anchors for `required` (a private CA, or a test certificate). */
  ca?: string | Buffer | undefined;
  /** The trust anchors built once for every connection (node would parse a `ca` list on each). */
  secureContext?: SecureContext | undefined;
  auth?: { user: string; pass: string } | undefined;
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  dataTimeoutMs: number;
}

type Phase = 'connect' | 'mail' | 'data';

function replyCode(text: string | undefined): number | null {
  const match = /^(\d{3})/.exec(text ?? '');
  return match ? Number(match[1]) : null;
}

/** Node's certificate and handshake errors (CERT_HAS_EXPIRED, ERR_TLS_CERT_ALTNAME_INVALID, ...). */
const TLS_ERROR = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/;

function stageOf(err: NodemailerError & { originalCode?: string }, phase: Phase): SmtpStage {
  const command = err.command ?? '';
  if (err.code === 'ETIMEDOUT') return 'timeout';
  if (TLS_ERROR.test(err.originalCode ?? '')) return 'tls';
  if (command === 'MAIL FROM') return 'mail';
  if (command === 'RCPT TO') return 'rcpt';
  if (command === 'DATA') return 'data';
  if (phase !== 'connect') return phase;
  if (err.code === 'ETLS' || command === 'STARTTLS') return 'tls';
  if (err.code === 'EAUTH' || err.code === 'ENOAUTH' || command.startsWith('AUTH')) return 'auth';
  if (command === 'EHLO' || command === 'HELO') return 'ehlo';
  return 'connect';
}

/**
 * Turns a client error into our result. 5xx is permanent, except at TLS and AUTH: those are our
 * own configuration or the server's certificate, and Postfix defers them too
 * (`smtp_sasl_auth_soft_bounce`, "TLS is required, but was not offered").
 */
export function failureFrom(err: NodemailerError, phase: Phase, host: string, timeoutMs: number): SmtpSendFailure {
  const stage = stageOf(err, phase);
  const code = err.responseCode ?? replyCode(err.response);
  const response =
    stage === 'timeout' ? `Timed out after ${timeoutMs} ms waiting for ${host} (${phase === 'connect' ? 'connection setup' : phase})` : (err.response ?? err.message);
  const temporary = stage === 'tls' || stage === 'auth' || stage === 'timeout' || code === null || code < 500;
  return { ok: false, stage, code, response, host, temporary };
}

/**
 * One SMTP connection, wrapped so that every operation settles even when the server drops the
 * connection mid-command (the client then reports it as an 'error' event, not to the callback).
 */
export class SmtpSession {
  readonly target: SessionTarget;
  transactions = 0;
  private readonly connection: SMTPConnection;
  private readonly options: SessionOptions;
  private lost: NodemailerError | null = null;
  private readonly lossWaiters = new Set<(err: NodemailerError) => void>();
  private readonly closeListeners = new Set<() => void>();
  /** Called when the server has accepted DATA (354) and the message is about to be written. */
  private onDataAccepted: (() => void) | null = null;

  private constructor(target: SessionTarget, options: SessionOptions) {
    this.target = target;
    this.options = options;
    // SNI carries names only (RFC 6066 §3).
    const servername = isIP(target.host) ? undefined : target.host;
    const tls: ConnectionOptions = {
      ...(servername ? { servername } : {}),
      // Opportunistic TLS takes any certificate (RFC 7435): encrypting beats plaintext, and
      // most MX certificates would not match the MX name anyway.
      rejectUnauthorized: options.tls === 'required',
      ...(options.secureContext ? { secureContext: options.secureContext } : options.ca ? { ca: options.ca } : {}),
    };
    const connectionOptions: SMTPConnectionOptions = {
      host: target.address,
      port: target.port,
      name: options.heloName,
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      ...(servername ? { servername } : {}),
      tls,
      requireTLS: options.tls === 'required',
      opportunisticTLS: options.tls === 'opportunistic',
      ignoreTLS: options.tls === 'ignore',
      connectionTimeout: options.connectTimeoutMs,
      greetingTimeout: options.connectTimeoutMs,
      socketTimeout: options.commandTimeoutMs,
      socketCloseTimeout: 1000,
      allowInternalNetworkInterfaces: true,
      logger: false,
    };
    this.connection = new SMTPConnection(connectionOptions);
    // Each message's DATA stream (nodemailer's DataStream) dot-stuffs with indexOf where it can.
    // The client creates it once DATA is accepted (354), which is when the body's timeout starts.
    const internals = this.connection as unknown as { _createSendStream(callback: unknown): Transform };
    const createSendStream = internals._createSendStream.bind(internals);
    internals._createSendStream = (callback) => {
      this.onDataAccepted?.();
      return withFastStuffing(createSendStream(callback));
    };
    this.connection.on('error', (err: NodemailerError) => this.markLost(err));
    this.connection.on('end', () => {
      this.markLost(Object.assign(new Error('Connection closed'), { code: 'ECONNECTION' }));
      for (const listener of this.closeListeners) listener();
    });
  }

  /** Connects, greets, upgrades and authenticates; a failure comes back as a result. */
  static async open(target: SessionTarget, options: SessionOptions): Promise<SmtpSession | SmtpSendFailure> {
    const session = new SmtpSession(target, options);
    try {
      await session.settle<void>((done) => session.connection.connect((err) => done(err ?? null)));
      if (options.tls === 'required' && !session.connection.secure) {
        session.destroy();
        return {
          ok: false,
          stage: 'tls',
          code: null,
          response: `TLS is required, but ${target.host} did not provide it`,
          host: target.host,
          temporary: true,
        };
      }
      if (options.auth) {
        const auth = options.auth;
        await session.settle<boolean | undefined>((done) => session.connection.login(auth, done));
      }
      return session;
    } catch (err) {
      session.destroy();
      const failed = failureFrom(err as NodemailerError, 'connect', target.host, options.connectTimeoutMs);
      // The client leaves `upgrading` set when the STARTTLS handshake itself broke (a reset, a
      // bad record, a stall): a TLS failure even though it surfaces as a socket error.
      if (session.connection.upgrading) {
        return { ...failed, stage: 'tls', response: `TLS handshake failed: ${(err as Error).message}`, temporary: true };
      }
      return failed;
    }
  }

  get alive(): boolean {
    return this.lost === null;
  }

  get secure(): boolean {
    return this.connection.secure;
  }

  /**
   * The session's protection. An opportunistic session takes any certificate, but whether it
   * would have passed (chain to our trust anchors, name of the host) is still known, which is
   * what an MTA-STS policy in `testing` reports.
   */
  get tlsState(): SessionTls {
    if (!this.connection.secure) return { secure: false, verified: false, problem: 'no TLS' };
    if (this.options.tls === 'required') return { secure: true, verified: true, problem: null };
    const socket = this.connection._socket as TLSSocket | undefined;
    if (!socket || typeof socket.getPeerCertificate !== 'function') return { secure: true, verified: false, problem: 'no certificate seen' };
    if (!socket.authorized) return { secure: true, verified: false, problem: `certificate not trusted (${String(socket.authorizationError)})` };
    const mismatch = isIP(this.target.host) ? undefined : checkServerIdentity(this.target.host, socket.getPeerCertificate());
    return { secure: true, verified: false, problem: mismatch ? mismatch.message : null };
  }

  onClose(listener: () => void): void {
    this.closeListeners.add(listener);
  }

  /** One transaction: MAIL, RCPT, DATA. The reply to the final dot decides. */
  async send(from: string, to: string, raw: Buffer): Promise<SmtpSendResult> {
    let phase = 'mail' as Phase;
    const socket = (): { setTimeout(ms: number): void } | null => this.connection._socket || null;
    // The body and the final reply get their own, longer timeout (RFC 5321 §4.5.3.2.5-6).
    this.onDataAccepted = () => {
      phase = 'data';
      socket()?.setTimeout(this.options.dataTimeoutMs);
    };
    this.transactions++;
    try {
      const eightBit = !isAscii(raw);
      const info = await this.settle<{ response: string }>((done) =>
        this.connection.send({ from: from === '' ? false : from, to, size: raw.length, use8BitMime: eightBit }, raw, (err, result) => done(err, result)),
      );
      socket()?.setTimeout(this.options.commandTimeoutMs);
      return { ok: true, code: replyCode(info.response) ?? 250, response: info.response, host: this.target.host };
    } catch (err) {
      const timeoutMs = phase === 'data' ? this.options.dataTimeoutMs : this.options.commandTimeoutMs;
      return failureFrom(err as NodemailerError, phase, this.target.host, timeoutMs);
    } finally {
      this.onDataAccepted = null;
    }
  }

  /** RSET, so the next transaction starts clean after a refused one (RFC 5321 §4.1.1.5). */
  async reset(): Promise<boolean> {
    if (!this.alive) return false;
    try {
      await this.settle<boolean | undefined>((done) => this.connection.reset(done));
      return true;
    } catch {
      return false;
    }
  }

  /** QUIT politely; the socket is closed when the server answers or drops. */
  quit(): void {
    if (!this.alive) return;
    this.markLost(Object.assign(new Error('Closed by us'), { code: 'ECONNECTION' }));
    this.connection.quit();
  }

  destroy(): void {
    this.markLost(Object.assign(new Error('Closed by us'), { code: 'ECONNECTION' }));
    this.connection.close();
  }

  private markLost(err: NodemailerError): void {
    if (this.lost) return;
    this.lost = err;
    // A server ending the session with a 421 reply makes the client close first and answer the
    // pending command after: its reply (the receiver's reason) must win over the bare loss.
    setImmediate(() => {
      for (const waiter of this.lossWaiters) waiter(err);
      this.lossWaiters.clear();
    });
  }

  /** Runs a callback-style client call, settling on its callback or on the connection's loss. */
  private settle<T>(start: (done: (err: NodemailerError | null | undefined, value?: T) => void) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.lost) return reject(this.lost);
      let settled = false;
      const onLoss = (err: NodemailerError): void => finish(err);
      const finish = (err: NodemailerError | null | undefined, value?: T): void => {
        if (settled) return;
        settled = true;
        this.lossWaiters.delete(onLoss);
        if (err) reject(err);
        else resolve(value as T);
      };
      this.lossWaiters.add(onLoss);
      start(finish);
    });
  }
}
