import { isIP } from 'node:net';
import { createSecureContext } from 'node:tls';
import { DnsError, type DnsResolver } from '../core/ports.ts';
import { ConnectionPool } from './connection-pool.ts';
import { SmtpSession, type SessionOptions, type SessionTarget } from './smtp-session.ts';
import type { SmtpSendFailure, SmtpSendRequest, SmtpSendResult, SmtpTransport } from './transport.ts';

export interface SmtpTransportOptions {
  /** EHLO name; receivers check it against our reverse DNS, so it is `server.hostname`. */
  heloName: string;
  tls: 'opportunistic' | 'required';
  maxConnectionsPerHost: number;
  /** Overall cap across destinations (default 100, Postfix's `default_process_limit`). */
  maxConnections?: number;
  /** TCP connect plus greeting, EHLO, STARTTLS and AUTH (default 30 s). */
  connectTimeoutMs?: number;
  /** Each of MAIL, RCPT, DATA, RSET (default 5 min, RFC 5321 §4.5.3.2). */
  commandTimeoutMs?: number;
  /** Sending the body and waiting for the reply to the final dot (default 10 min, RFC 5321 §4.5.3.2.6). */
  dataTimeoutMs?: number;
  /** How long an unused connection stays open for the next message (default 5 s). */
  idleTimeoutMs?: number;
  /** A smarthost that takes every message instead of the MX, with AUTH when user/pass are set. */
  relay?: { host: string; port: number; user?: string; pass?: string };
  /**
   * Resolves MX host names through the configured DNS servers, like the MX lookup itself;
   * without it host names go to the system resolver.
   */
  dns?: DnsResolver;
  /** Trust anchors for verified TLS (`tls: 'required'`, MTA-STS), e.g. the system's plus a private CA. */
  tlsCa?: string | Buffer | string[];
}

const ADDRESS_TTL_MS = 5000;

function failure(host: string, stage: SmtpSendFailure['stage'], response: string): SmtpSendFailure {
  return { ok: false, stage, code: null, response, host, temporary: true };
}

function isSession(value: SmtpSession | SmtpSendFailure): value is SmtpSession {
  return value instanceof SmtpSession;
}

/** Addresses to try for a host, through our resolver when we have one; a failure is temporary. */
async function addressesOf(host: string, dns: DnsResolver | undefined): Promise<string[] | SmtpSendFailure> {
  if (isIP(host) || !dns) return [host];
  const found: string[] = [];
  let lastError: unknown = null;
  for (const lookup of [(name: string) => dns.resolve4(name), (name: string) => dns.resolve6(name)]) {
    try {
      found.push(...(await lookup(host)));
    } catch (err) {
      lastError = err;
    }
  }
  if (found.length > 0) return found;
  const reason = lastError instanceof DnsError ? `${lastError.kind}, ${lastError.code}` : String(lastError);
  // An MX host without an address is a broken zone that is usually fixed soon; defer, never bounce.
  return failure(host, 'connect', `Could not resolve the address of ${host} (${reason})`);
}

/**
 * Outbound SMTP over nodemailer's client (MAIL, RCPT and DATA pipelined where the server offers
 * PIPELINING). Every call is one transaction on a connection reused per destination; after a
 * refused transaction RSET proves the connection is still usable before it is handed to the next
 * message.
 */
export function createSmtpTransport(opts: SmtpTransportOptions): SmtpTransport {
  const pool = new ConnectionPool<SmtpSession, SmtpSendFailure>({
    perKey: opts.maxConnectionsPerHost,
    total: opts.maxConnections ?? 100,
    idleTimeoutMs: opts.idleTimeoutMs ?? 5000,
  });
  const baseOptions: Omit<SessionOptions, 'tls'> = {
    heloName: opts.heloName,
    ...(Array.isArray(opts.tlsCa) ? { secureContext: createSecureContext({ ca: opts.tlsCa }) } : { ca: opts.tlsCa }),
    auth: opts.relay?.user !== undefined ? { user: opts.relay.user, pass: opts.relay.pass ?? '' } : undefined,
    connectTimeoutMs: opts.connectTimeoutMs ?? 30_000,
    commandTimeoutMs: opts.commandTimeoutMs ?? 300_000,
    dataTimeoutMs: opts.dataTimeoutMs ?? 600_000,
  };
  let closed = false;

  /** A host's addresses, kept 5 s (a send asks for them before it takes a connection). */
  const known = new Map<string, { until: number; addresses: string[] }>();
  async function addressesFor(host: string, source: SmtpSendRequest['source']): Promise<string[] | SmtpSendFailure> {
    const now = Date.now();
    let entry = known.get(host);
    if (!entry || entry.until <= now) {
      const found = await addressesOf(host, opts.dns);
      if (!Array.isArray(found)) return found;
      entry = { until: now + ADDRESS_TTL_MS, addresses: found };
      known.delete(host);
      known.set(host, entry);
      if (known.size > 5000) known.delete(known.keys().next().value!);
    }
    // A bound source address reaches only destinations of its own family.
    return source ? entry.addresses.filter((a) => isIP(a) === 0 || isIP(a) === isIP(source.address)) : entry.addresses;
  }

  async function openSession(
    host: string,
    port: number,
    source: SmtpSendRequest['source'],
    addresses: string[],
    tls: SessionOptions['tls'],
  ): Promise<SmtpSession | SmtpSendFailure> {
    let last: SmtpSendFailure = failure(host, 'connect', `No address to connect to for ${host}${source ? ` from ${source.address}` : ''}`);
    const options = source ? { ...baseOptions, heloName: source.ehlo, localAddress: source.address } : baseOptions;
    for (const address of addresses) {
      const target: SessionTarget = { host, address, port };
      let opened = await SmtpSession.open(target, { ...options, tls });
      // Opportunistic TLS that fails in the handshake is retried in plaintext, as Postfix does
      // at security level `may`: a server with a broken TLS stack still gets its mail.
      if (!isSession(opened) && opened.stage === 'tls' && tls === 'opportunistic') {
        opened = await SmtpSession.open(target, { ...options, tls: 'ignore' });
      }
      if (isSession(opened)) return opened;
      last = opened;
      // The server answered (or TLS/AUTH failed): another address of the same host won't differ.
      if (opened.code !== null || opened.stage !== 'connect') return opened;
    }
    return last;
  }

  return {
    async send(req: SmtpSendRequest): Promise<SmtpSendResult> {
      const host = opts.relay?.host ?? req.host;
      const port = opts.relay?.port ?? req.port;
      const addresses = await addressesFor(host, req.source);
      if (!Array.isArray(addresses)) return addresses;
      // Connections are reused by the server's address, as Postfix does: the MX hosts of many
      // domains (one per Microsoft 365 tenant) are a few servers. With TLS required the
      // certificate is checked for the MX host's name, so there the name is part of the key.
      // A group's connections are its own, even to a server another group also uses, and so are
      // each source address's.
      // An MTA-STS send asks for the check whatever `delivery.tls` says, and so gets its own.
      const tls = req.verifyTls === true && !opts.relay ? 'required' : opts.tls;
      const server = tls === 'required' ? `${host}/${addresses[0] ?? ''}` : (addresses[0] ?? host);
      const key = `${req.group ? `${req.group.name}|` : ''}${req.source ? `${req.source.address}|` : ''}${server}:${port}`;
      for (let attempt = 0; ; attempt++) {
        if (closed) return failure(host, 'connect', 'The SMTP transport is shutting down');
        const session = await pool.acquire(key, () => openSession(host, port, req.source, addresses, tls), isSession, req.group);
        if (!isSession(session)) return session;
        const notNow = req.ready ? await req.ready() : null;
        if (notNow !== null) {
          await pool.release(session, true, false);
          return { ...failure(host, 'connect', notNow), notSent: true };
        }
        const reused = session.transactions > 0;
        const sessionTls = session.tlsState;
        const result = await session.send(req.envelope.from, req.envelope.to, req.raw);
        // A refusal leaves the connection usable after RSET; a timeout or a drop does not. A
        // delivered message needs no RSET: a connection dropped meanwhile is caught below, as
        // stale. Awaited, so a caller sending one message after another finds it idle again.
        const keep = (result.ok || (result.code !== null && session.alive)) && !(req.closeAfter?.(result) ?? false);
        await pool.release(session, keep, !result.ok);
        // A reused connection the server had already dropped fails before any reply. That says
        // nothing about this message, so it gets one fresh connection.
        const stale = !result.ok && reused && result.code === null && result.stage === 'mail';
        if (stale && attempt === 0) continue;
        // The MX host this message was for, though the connection may have been opened for another name of the same server.
        return { ...result, host, tls: sessionTls };
      }
    },
    async close() {
      closed = true;
      await pool.close(failure(opts.relay?.host ?? '', 'connect', 'The SMTP transport is shutting down'));
    },
    stats: () => pool.stats(),
  };
}
