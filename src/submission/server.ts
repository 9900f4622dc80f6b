import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { SMTPServer, type SMTPServerAddress, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { ServiceError } from '../core/errors.ts';
import type { Clock, Logger } from '../core/ports.ts';
import type { AcceptService } from '../messages/accept.ts';
import { isProblem, parseMailbox, type Mailbox } from '../messages/address.ts';
import { guardListener } from '../listeners/guard.ts';
import { ConnectionLimiter } from '../ratelimit/connections.ts';
import type { RateDecision } from '../ratelimit/sliding.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { TlsCredentials } from '../tls/certificates.ts';
import { AuthFailures, insecureAuthAllowed } from './auth.ts';
import { readSubmission } from './message.ts';
import { PromptGreetingServer } from './prompt-greeting.ts';
import { SmtpReplyError } from '../core/smtp-reply.ts';
import { fromServiceError, refuse } from './replies.ts';

export const MAX_RECIPIENTS = 100;
/** Connections one address may hold (`submission.maxConnectionsPerAddress`); applications behind one NAT address share it. */
const MAX_CONNECTIONS_PER_IP = 10;
/** Idempotency over SMTP dedupes by the key alone: a client's retry carries a new Date and Message-ID. */
const SMTP_REQUEST_HASH = 'smtp-submission';

export interface SubmissionDeps {
  accept: AcceptService;
  authenticate(token: string | undefined): Promise<Principal>;
  rateLimit(principal: Principal): Promise<RateDecision>;
  clock: Clock;
  log: Logger;
  hostname: string;
}

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
}

export interface SubmissionListeners {
  ports: { submission: number; submissions: number };
  close(): Promise<void>;
}

/** What arrived in DATA, or only how much when it went over the limit (the rest is read and dropped). */
async function readBounded(stream: Readable, maxSize: number): Promise<Buffer | { oversize: number }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= maxSize) chunks.push(chunk);
  }
  return size > maxSize ? { oversize: size } : Buffer.concat(chunks, size);
}

const principalOf = (session: SMTPServerSession) => session.user as unknown as Principal;

/**
 * The smtp-server adapter of SMTP submission: AUTH resolves an API key to its principal, each
 * envelope command is a guard with its own reply, and DATA goes through the same accept
 * pipeline as POST /emails, answered 250 only once the message is durable.
 */
export async function startSubmissionListeners(deps: SubmissionDeps, options: SubmissionOptions): Promise<SubmissionListeners> {
  const log = deps.log.child({ role: 'submission' });
  const failures = new AuthFailures(deps.clock);
  const connections = new ConnectionLimiter(options.maxConnectionsPerIp ?? MAX_CONNECTIONS_PER_IP);

  const handlers: Partial<SMTPServerOptions> = {
    onConnect(session, callback) {
      if (!connections.admit(session.id, session.remoteAddress)) return callback(refuse('tooManyConnections'));
      callback();
    },

    onClose(session) {
      connections.release(session.id);
    },

    onAuth(auth, session, callback) {
      const ip = session.remoteAddress;
      if (failures.blocked(ip)) return callback(refuse('tooManyAuthFailures'));
      if (!session.secure && !insecureAuthAllowed(options, ip)) return callback(refuse('tlsFirst'));
      deps.authenticate(auth.password ?? undefined).then(
        (principal) => callback(null, { user: principal as never }),
        (err: unknown) => {
          if (!(err instanceof ServiceError)) {
            log.error({ phase: 'auth', session: session.id, err }, 'key lookup failed');
            return callback(refuse('storeFailed'));
          }
          failures.fail(ip);
          log.info({ phase: 'auth', session: session.id, ip }, 'AUTH refused');
          callback(refuse('badCredentials'));
        },
      );
    },

    onMailFrom(address: SMTPServerAddress, session, callback) {
      guarded(session, callback, async () => {
        const declared = Number((address.args || {}).SIZE ?? 0);
        if (declared > options.maxSize) throw refuse('tooBig', `Message too big: at most ${options.maxSize} bytes`);
        const principal = principalOf(session);
        if (address.address) {
          const sender = parseMailbox(address.address);
          if (isProblem(sender)) throw refuse('badAddress', `Sender address ${sender.problem}`);
          const problem = await deps.accept.sendingDomainProblem(principal, sender.domain);
          if (problem) throw refuse('senderDomain', `Sender domain ${sender.domain} not allowed: ${problem}`);
        }
        const decision = await deps.rateLimit(principal);
        if (!decision.allowed) {
          throw refuse('rateLimited', `Rate limit exceeded: ${decision.window.limit} messages per ${decision.window.name}; try again in ${decision.retryAfter} s`);
        }
      });
    },

    onRcptTo(address: SMTPServerAddress, session, callback) {
      const known = session.envelope.rcptTo.some((r) => r.address.toLowerCase() === address.address.toLowerCase());
      if (!known && session.envelope.rcptTo.length >= MAX_RECIPIENTS) return callback(refuse('tooManyRecipients'));
      const rcpt = parseMailbox(address.address);
      if (isProblem(rcpt)) return callback(refuse('badAddress', `Recipient address ${rcpt.problem}`));
      callback();
    },

    onData(stream, session, callback) {
      receive(stream, session).then(
        (id) => callback(null, `2.0.0 Ok: queued as ${id}`),
        (err: Error & { code?: string }) => {
          if (err.code === 'ECONNECTION') {
            // The client left before the final dot: nothing was acknowledged and nothing stored.
            log.info({ phase: 'data', session: session.id, ip: session.remoteAddress }, 'client left during DATA');
          }
          callback(replyFor(err, session));
        },
      );
    },
  };

  async function receive(stream: Readable, session: SMTPServerSession): Promise<number> {
    const raw = await readBounded(stream, options.maxSize);
    if (!Buffer.isBuffer(raw)) throw refuse('tooBig', `Message too big: ${raw.oversize} bytes, at most ${options.maxSize}`);
    const principal = principalOf(session);
    const rcpts = session.envelope.rcptTo.map((r) => parseMailbox(r.address) as Mailbox);
    const { message, sender, idempotencyKey } = await readSubmission(raw, rcpts, deps.clock.now());
    const idem = idempotencyKey === null ? undefined : { key: idempotencyKey, hash: SMTP_REQUEST_HASH };
    const replayed = idem && (await deps.accept.replay(principal, idem));
    if (replayed) return replayed.body.id;
    const problem = await deps.accept.sendingDomainProblem(principal, message.from.domain);
    if (problem) throw refuse('senderDomain', `From domain ${message.from.domain} not allowed: ${problem}`);
    const senderProblem = sender && (await deps.accept.sendingDomainProblem(principal, sender.domain));
    if (senderProblem) throw refuse('senderDomain', `Sender domain ${sender.domain} not allowed: ${senderProblem}`);
    const result = await deps.accept.accept(principal, message, idem, 'smtp');
    return result.body.id;
  }

  function replyFor(err: Error, session: SMTPServerSession): Error {
    if (err instanceof SmtpReplyError) return err;
    if (err instanceof ServiceError) return fromServiceError(err);
    if ((err as { code?: string }).code !== 'ECONNECTION') log.error({ session: session.id, err }, 'submission failed');
    return refuse('storeFailed');
  }

  function guarded(session: SMTPServerSession, callback: (err?: Error | null) => void, step: () => Promise<void>): void {
    step().then(
      () => callback(),
      (err: Error) => callback(replyFor(err, session)),
    );
  }

  const base: SMTPServerOptions = {
    name: deps.hostname,
    banner: 'mailsvc submission',
    key: options.tls.key,
    cert: options.tls.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    // Decided per client (loopback may be exempt): before any prompt by guardListener, again in onAuth; the reply is 538 5.7.11.
    allowInsecureAuth: true,
    // Our replies carry their own RFC 3463 codes (5.7.11, 4.5.3, 5.3.4), which smtp-server's table lacks.
    hideENHANCEDSTATUSCODES: true,
    // SIZE advertised without a number; a declared size over the limit is refused in onMailFrom with 5.3.4.
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
  for (const server of servers) {
    server.on('error', (err) => log.warn({ phase: 'session', err }, 'submission session error'));
    guardListener(server, {
      proxyFrom: options.proxyProtocol?.from ?? [],
      handshakeTimeoutMs: options.handshakeTimeoutMs ?? 10_000,
      maxPendingPerAddress: options.maxConnectionsPerIp ?? MAX_CONNECTIONS_PER_IP,
      plainAuthAllowed: (ip) => insecureAuthAllowed(options, ip),
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
    ports: { submission: ports[0], submissions: ports[1] },
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
