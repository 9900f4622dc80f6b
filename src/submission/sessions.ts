import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { SMTPServer, type SMTPServerAddress, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import type { Logger } from '../core/ports.ts';
import { SmtpReplyError } from '../core/smtp-reply.ts';
import { isProblem, parseMailbox } from '../messages/address.ts';
import { guardListener } from '../listeners/guard.ts';
import { ConnectionLimiter } from '../ratelimit/connections.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { TlsCredentials } from '../tls/certificates.ts';
import { insecureAuthAllowed } from './auth.ts';
import type { SubmissionDesk } from './desk.ts';
import { PromptGreetingServer } from './prompt-greeting.ts';
import { refuse } from './replies.ts';
import { trustedKeyFinder, type TrustedNetwork } from './trusted-networks.ts';

const MAX_RECIPIENTS = 100;
/** Connections one address may hold (`submission.maxConnectionsPerAddress`); applications behind one NAT address share it. */
const MAX_CONNECTIONS_PER_IP = 10;

export interface SubmissionOptions {
  host: string;
  /** STARTTLS; 0 picks a free port. */
  port: number;
  /** Implicit TLS; 0 picks a free port. */
  tlsPort: number;
  maxSize: number;
  allowInsecureAuth: boolean;
  loopbackInsecureAuth: boolean;
  tls: TlsCredentials;
  maxClients?: number;
  maxConnectionsPerIp?: number;
  socketTimeoutMs?: number;
  closeTimeoutMs?: number;
  /** `submission.proxyProtocol`: peers whose connections start with a PROXY header. */
  proxyProtocol?: { from: readonly string[] };
  /** `submission.handshakeTimeoutMs`: for the PROXY header and the implicit-TLS handshake. */
  handshakeTimeoutMs?: number;
  /** `submission.trustedNetworks`: clients that may submit without AUTH, each as a key (decided by the desk). */
  trustedNetworks?: readonly TrustedNetwork[];
}

export interface SubmissionListeners {
  ports: { submission: number; submissions: number };
  close(): Promise<void>;
}

/**
 * What arrived in DATA, or only how much when it went over the limit (the rest is read and
 * dropped). The bytes are in a buffer of their own, so they can be handed to another thread
 * without copying.
 */
async function readBounded(stream: Readable, maxSize: number): Promise<Buffer | { oversize: number }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= maxSize) chunks.push(chunk);
  }
  if (size > maxSize) return { oversize: size };
  const raw = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (const chunk of chunks) at += chunk.copy(raw, at);
  return raw;
}

type AuthCallback = Parameters<NonNullable<SMTPServerOptions['onAuth']>>[2];

/** The session's own principal, from AUTH; undefined before it. */
const principalOf = (session: SMTPServerSession) => session.user as unknown as Principal | undefined;
const refOf = (session: SMTPServerSession) => ({ id: session.id, ip: session.remoteAddress });

/**
 * The smtp-server side of SMTP submission: both listeners, the connection limits and the
 * protocol, with each decision (AUTH, MAIL FROM, the message) asked of the desk. RCPT TO is
 * answered here: it needs nothing but the address.
 */
export async function listenForSessions(desk: SubmissionDesk, options: SubmissionOptions, hostname: string, log: Logger): Promise<SubmissionListeners> {
  const connections = new ConnectionLimiter(options.maxConnectionsPerIp ?? MAX_CONNECTIONS_PER_IP);
  /** The principal each transaction of a session without AUTH runs as (a trusted network's key), by session id. */
  const networkPrincipals = new Map<string, Principal>();

  /** The reply for a question the desk did not answer: its own refusal, or a failure to store (logged). */
  const failed = (err: unknown, session: SMTPServerSession): SmtpReplyError => {
    if (err instanceof SmtpReplyError) return err;
    log.error({ session: session.id, err }, 'submission failed');
    return refuse('storeFailed');
  };

  // Each step is made once and awaits the desk: callbacks made per command would have their
  // optimised code dropped at every full collection on Node 20 (bench/NOTES.md).
  const authenticate = async (password: string | undefined, session: SMTPServerSession, callback: AuthCallback): Promise<void> => {
    let principal: Principal;
    try {
      principal = await desk.authenticate({ ...refOf(session), secure: session.secure }, password);
    } catch (err) {
      return callback(failed(err, session));
    }
    callback(null, { user: principal as never });
  };

  const mailFrom = async (address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void): Promise<void> => {
    const declared = Number((address.args || {}).SIZE ?? 0);
    const own = principalOf(session) ?? null;
    try {
      const acting = await desk.mailFrom(refOf(session), own, address.address, declared);
      if (acting) networkPrincipals.set(session.id, acting);
    } catch (err) {
      return callback(failed(err, session));
    }
    callback();
  };

  const receive = async (stream: Readable, session: SMTPServerSession, callback: (err?: Error | null, message?: string) => void): Promise<void> => {
    let raw: Buffer | { oversize: number };
    try {
      raw = await readBounded(stream, options.maxSize);
    } catch (err) {
      // The client left before the final dot: nothing was acknowledged and nothing stored.
      if ((err as { code?: string }).code === 'ECONNECTION') log.info({ phase: 'data', session: session.id, ip: session.remoteAddress }, 'client left during DATA');
      else log.error({ session: session.id, err }, 'submission failed');
      return callback(refuse('storeFailed'));
    }
    if (!Buffer.isBuffer(raw)) return callback(refuse('tooBig', `Message too big: ${raw.oversize} bytes, at most ${options.maxSize}`));
    const rcpts: string[] = [];
    for (const r of session.envelope.rcptTo) rcpts.push(r.address);
    // MAIL FROM was answered 250 only with one of the two.
    const principal = (principalOf(session) ?? networkPrincipals.get(session.id)) as Principal;
    let id: number;
    try {
      id = await desk.data(refOf(session), principal, raw, rcpts);
    } catch (err) {
      return callback(failed(err, session));
    }
    callback(null, `2.0.0 Ok: queued as ${id}`);
  };

  const handlers: Partial<SMTPServerOptions> = {
    onConnect(session, callback) {
      if (!connections.admit(session.id, session.remoteAddress)) return callback(refuse('tooManyConnections'));
      callback();
    },

    onClose(session) {
      connections.release(session.id);
      networkPrincipals.delete(session.id);
    },

    onAuth(auth, session, callback) {
      void authenticate(auth.password ?? undefined, session, callback);
    },

    onMailFrom(address: SMTPServerAddress, session, callback) {
      void mailFrom(address, session, callback);
    },

    onRcptTo(address: SMTPServerAddress, session, callback) {
      const known = session.envelope.rcptTo.some((r) => r.address.toLowerCase() === address.address.toLowerCase());
      if (!known && session.envelope.rcptTo.length >= MAX_RECIPIENTS) return callback(refuse('tooManyRecipients'));
      const rcpt = parseMailbox(address.address);
      if (isProblem(rcpt)) return callback(refuse('badAddress', `Recipient address ${rcpt.problem}`));
      callback();
    },

    onData(stream, session, callback) {
      void receive(stream, session, callback);
    },
  };

  const base: SMTPServerOptions = {
    name: hostname,
    banner: 'mailsvc submission',
    key: options.tls.key,
    cert: options.tls.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    // Decided per client (loopback may be exempt): before any prompt by guardListener, again at AUTH; the reply is 538 5.7.11.
    allowInsecureAuth: true,
    // With trusted networks, MAIL without AUTH reaches the desk, which refuses it (530 5.7.0) unless the client is in one.
    authOptional: (options.trustedNetworks ?? []).length > 0,
    // Our replies carry their own RFC 3463 codes (5.7.11, 4.5.3, 5.3.4), which smtp-server's table lacks.
    hideENHANCEDSTATUSCODES: true,
    // SIZE advertised without a number; a declared size over the limit is refused at MAIL FROM with 5.3.4.
    size: options.maxSize,
    hideSize: true,
    disableReverseLookup: true,
    maxClients: options.maxClients ?? 500,
    socketTimeout: options.socketTimeoutMs ?? 300_000,
    closeTimeout: options.closeTimeoutMs ?? 10_000,
    logger: false,
    ...handlers,
  };

  const servers = [new PromptGreetingServer({ ...base, secure: false }), new PromptGreetingServer({ ...base, secure: true })];
  const trustedKey = trustedKeyFinder(options.trustedNetworks ?? []);
  for (const server of servers) {
    server.on('error', (err) => log.warn({ phase: 'session', err }, 'submission session error'));
    guardListener(server, {
      proxyFrom: options.proxyProtocol?.from ?? [],
      handshakeTimeoutMs: options.handshakeTimeoutMs ?? 10_000,
      maxPendingPerAddress: options.maxConnectionsPerIp ?? MAX_CONNECTIONS_PER_IP,
      plainAuthAllowed: (ip) => insecureAuthAllowed(options, ip),
      ...(base.authOptional ? { capBeforeAuth: (ip: string) => trustedKey(ip) === null } : {}),
      log,
    });
  }
  const ports: number[] = [];
  try {
    for (const [i, server] of servers.entries()) ports.push(await listen(server, i === 0 ? options.port : options.tlsPort, options.host));
  } catch (err) {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    throw err;
  }
  return {
    ports: { submission: ports[0]!, submissions: ports[1]! },
    close: async () => {
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}

function listen(server: SMTPServer, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.server.once('error', onError);
    server.listen(port, host, () => {
      server.server.off('error', onError);
      resolve((server.server.address() as AddressInfo).port);
    });
  });
}
