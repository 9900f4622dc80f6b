import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { TlsCredentials } from '../tls/certificates.ts';
import type { ReturnPathDomains } from '../domains/return-path.ts';
import { guardListener } from '../listeners/guard.ts';
import { ConnectionLimiter } from '../ratelimit/connections.ts';
import { INBOUND_LIMITS, MessageRateLimiter } from './limits.ts';
import { checkRecipient, type InboundTarget } from './policy.ts';
import { ParseQueueFull, startParsePool, type ParsePoolOptions } from './parse-pool.ts';
import { handleReport, type HandledReport, type InboundDeps } from './process.ts';
import { captureMessage } from './receive.ts';
import { SmtpReplyError } from '../core/smtp-reply.ts';
import { smtpError, type ReplyName } from './replies.ts';
import type { TokenCodec } from '../tokens/index.ts';
import type { ReceivingRoutes } from '../routes/receiving.ts';
import { receiveForRoutes, type RouteMailDeps, type RouteTarget } from './route-mail.ts';

export interface InboundListenerOptions {
  host: string;
  port: number;
  /** Bytes of a report that are kept; the rest is read and dropped. */
  maxSize: number;
  tls: TlsCredentials | null;
  maxClients?: number;
  maxConnectionsPerIp?: number;
  messagesPerMinutePerIp?: number;
  maxRecipients?: number;
  socketTimeoutMs?: number;
  closeTimeoutMs?: number;
  /** Raw bytes stored per sending IP per UTC day (`inbound.dailyStoreBytesPerIp`). */
  dailyStoreBytesPerIp?: number;
  /** `inbound.proxyProtocol.from`: peers whose connections start with a PROXY header. */
  proxyFrom?: readonly string[];
  /** `inbound.handshakeTimeoutMs`: for the PROXY header. */
  handshakeTimeoutMs?: number;
  /** Report parsing in worker threads (`inbound.parseWorkers`, `parseBudgetMs`, `parseQueue`). */
  parse?: ParsePoolOptions;
  /** RCPTs per transaction for routes (SPEC §14). */
  maxRouteRecipients?: number;
}

/** RCPTs one message may have when they are for routes: SPEC §14's 100, RFC 5321 §4.5.3.1.8's minimum. */
const ROUTE_RECIPIENTS = 100;

/** The defaults of `inbound.parseWorkers`, `inbound.parseBudgetMs` and `inbound.parseQueue`. */
const PARSE_DEFAULTS: ParsePoolOptions = { workers: 2, budgetMs: 2000, maxQueued: 20 };
/** The default of `inbound.dailyStoreBytesPerIp`. */
const DAILY_STORE_BYTES_PER_IP = 52_428_800;

export interface InboundListenerDeps extends InboundDeps {
  unsubscribe: TokenCodec;
  returnPathDomains: ReturnPathDomains;
  /** Receiving domains and their routes (SPEC §14); without them only reports are taken. */
  receiving?: ReceivingRoutes;
  /** What mail for routes needs beyond the listener's own deps. */
  routeMail?: Pick<RouteMailDeps, 'committer' | 'resolver' | 'inlineAttachmentBytes' | 'baseUrl'>;
}

export interface InboundListener {
  port: number;
  close(): Promise<void>;
}

/**
 * The smtp-server adapter of the inbound MX: each callback is a guard that asks a pure policy
 * function (policy.ts) or a limiter and answers with its reply; the report itself goes to the
 * pipeline in process.ts. It never sends mail: every answer is an SMTP reply on this session.
 */
export async function startInboundListener(deps: InboundListenerDeps, options: InboundListenerOptions): Promise<InboundListener> {
  const limits = { ...INBOUND_LIMITS, ...definedOnly(options) };
  const connections = new ConnectionLimiter(limits.maxConnectionsPerIp);
  const rates = new MessageRateLimiter(limits.messagesPerMinutePerIp, deps.clock);
  // Accepted RCPTs of the current transaction, by session; smtp-server keeps only the address.
  const targets = new Map<string, Map<string, InboundTarget>>();
  const log = deps.log.child({ role: 'inbound' });
  const parser = await startParsePool(options.parse ?? PARSE_DEFAULTS, log);
  const bounds = { dailyStoreBytesPerIp: options.dailyStoreBytesPerIp ?? DAILY_STORE_BYTES_PER_IP };

  const refuse = (name: ReplyName, session: SMTPServerSession, phase: string, detail: Record<string, unknown> = {}) => {
    deps.metrics.inboundRefusals.inc({ reason: name });
    log.info({ phase, session: session.id, ip: session.remoteAddress, reason: name, ...detail }, `refused: ${name}`);
    return smtpError(name);
  };

  const server = new SMTPServer({
    name: deps.hostname,
    banner: 'mailsvc inbound',
    secure: false,
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : {}),
    disabledCommands: options.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    authOptional: true,
    // Our replies carry their own RFC 3463 code (5.7.1 for relaying, not smtp-server's 5.1.1).
    hideENHANCEDSTATUSCODES: true,
    // Reverse DNS decides nothing here and would stall every greeting on a slow resolver.
    disableReverseLookup: true,
    // No SIZE: a sender that believes a limit bounces its report locally instead of sending it.
    maxClients: limits.maxClients,
    socketTimeout: limits.socketTimeoutMs,
    closeTimeout: limits.closeTimeoutMs,
    logger: false,

    onConnect(session, callback) {
      if (!connections.admit(session.id, session.remoteAddress)) {
        return callback(refuse('tooManyConnections', session, 'connect', { open: connections.open(session.remoteAddress) }));
      }
      log.debug({ phase: 'connect', session: session.id, ip: session.remoteAddress }, 'connection');
      callback();
    },

    onClose(session) {
      connections.release(session.id);
      targets.delete(session.id);
    },

    // Any sender, the null sender of a DSN included: no SPF or DMARC rejection of reports.
    onMailFrom(_address: SMTPServerAddress, session, callback) {
      targets.set(session.id, new Map());
      if (!rates.hit(session.remoteAddress)) return callback(refuse('rateLimited', session, 'mail'));
      callback();
    },

    onRcptTo(address: SMTPServerAddress, session, callback) {
      const accepted = targets.get(session.id) ?? new Map<string, InboundTarget>();
      Promise.all([deps.returnPathDomains.snapshot(), deps.receiving?.snapshot()]).then(
        ([returnPathDomains, receiving]) => {
          const decision = checkRecipient({ accepted: accepted.size }, address.address, {
            returnPathDomains,
            verp: deps.verp,
            unsubscribe: deps.unsubscribe,
            maxRecipients: limits.maxRecipients,
            receiving,
            maxRouteRecipients: options.maxRouteRecipients ?? ROUTE_RECIPIENTS,
          });
          if (!decision.ok) return callback(refuse(decision.reason as ReplyName, session, 'rcpt', { rcpt: address.address }));
          accepted.set(address.address.toLowerCase(), decision.value);
          targets.set(session.id, accepted);
          callback();
        },
        (err: Error) => {
          log.error({ phase: 'rcpt', session: session.id, err }, 'return-path or receiving domains unavailable');
          callback(smtpError('storeFailed'));
        },
      );
    },

    onData(stream: SMTPServerDataStream, session, callback) {
      const accepted = [...(targets.get(session.id)?.values() ?? [])];
      const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
      receive(stream, accepted, mailFrom, session).then(
        (message) => callback(null, message),
        (err: Error & { code?: string }) => {
          if (err.code === 'ECONNECTION') {
            // The peer left before the final dot: nothing was acknowledged, so nothing is lost.
            log.info({ phase: 'data', session: session.id, ip: session.remoteAddress }, 'client left during DATA');
          } else if (err instanceof ParseQueueFull) {
            return callback(refuse('parserBusy', session, 'data'));
          } else if (!(err instanceof SmtpReplyError)) {
            log.error({ phase: 'data', session: session.id, err }, 'report not stored');
          }
          callback(err instanceof SmtpReplyError ? err : smtpError('storeFailed'));
        },
      );
    },
  });

  async function receive(stream: SMTPServerDataStream, accepted: InboundTarget[], mailFrom: string, session: SMTPServerSession): Promise<string> {
    const captured = await captureMessage(stream, options.maxSize);
    const routed = accepted.filter((t): t is RouteTarget => t.kind === 'route');
    const reports = accepted.filter((t) => t.kind !== 'route');
    const received: number[] = [];
    if (routed.length > 0) {
      if (!deps.routeMail) throw smtpError('storeFailed');
      const ids = await receiveForRoutes({ clock: deps.clock, log, hostname: deps.hostname, ...deps.routeMail }, parser, {
        captured,
        targets: routed,
        mailFrom,
        remoteIp: session.remoteAddress,
        helo: session.hostNameAppearsAs || null,
      });
      received.push(...ids);
      log.info({ phase: 'data', session: session.id, ip: session.remoteAddress, inbound: ids, size: captured.size, rcpts: routed.length }, 'received for routes');
      if (reports.length === 0) return `2.0.0 Ok: received as ${ids.join(',')}`;
    }
    const parse = await parser.parse(captured.raw);
    if (parse.unparsed) deps.metrics.inboundUnparsed.inc({ reason: parse.unparsed });
    const handled: HandledReport[] = [];
    for (const target of reports) {
      const report = { target, mailFrom, remoteIp: session.remoteAddress, helo: session.hostNameAppearsAs || null, parse, ...captured };
      handled.push(await handleReport(deps, report, bounds));
    }
    const kept = handled.reduce((most, h) => Math.max(most, h.kept), 0);
    const note = kept < captured.size ? ` (kept the first ${kept} of ${captured.size} bytes)` : '';
    const also = received.length > 0 ? `; received as ${received.join(',')}` : '';
    return `2.0.0 Ok: report ${handled.map((h) => h.id).join(',')} stored${note}${also}`;
  }

  // An error on a client socket (reset mid-session, bad TLS) is that session's problem only.
  server.on('error', (err) => log.warn({ phase: 'session', err }, 'inbound session error'));
  guardListener(server, {
    proxyFrom: options.proxyFrom ?? [],
    handshakeTimeoutMs: options.handshakeTimeoutMs ?? 10_000,
    maxPendingPerAddress: limits.maxConnectionsPerIp,
    log,
  });

  try {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      server.server.once('error', onError);
      server.listen(options.port, options.host, () => {
        server.server.off('error', onError);
        resolve();
      });
    });
  } catch (err) {
    await parser.close();
    throw err;
  }
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await parser.close();
    },
  };
}

function definedOnly(o: InboundListenerOptions): Partial<typeof INBOUND_LIMITS> {
  const out: Record<string, number> = {};
  for (const key of Object.keys(INBOUND_LIMITS) as (keyof typeof INBOUND_LIMITS)[]) {
    const v = o[key];
    if (typeof v === 'number') out[key] = v;
  }
  return out;
}
