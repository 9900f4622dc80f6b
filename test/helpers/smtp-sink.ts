import { EventEmitter } from 'node:events';
import type { AddressInfo, Socket } from 'node:net';
import { generate } from 'selfsigned';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';

/** A reply the sink gives instead of accepting, e.g. `{ code: 550, message: '5.1.1 No such user' }`. */
export interface SinkReply {
  code: number;
  message: string;
}

/** What one stage does in one attempt: wait first (stall), then reply (or accept when no reply). */
export interface SinkAction {
  stallMs?: number;
  /** Waits for this (a test's gate) before replying, after any stall. */
  until?: Promise<unknown>;
  reply?: SinkReply;
}

/** One attempt's behaviour. `mail` applies when the address is the sender, the others when it is a recipient. */
export interface SinkAttempt {
  mail?: SinkAction;
  rcpt?: SinkAction;
  data?: SinkAction;
}

export interface SinkMessage {
  /** When the message was taken (after the final dot), epoch ms. */
  at: number;
  connectionId: string;
  from: string;
  to: string[];
  raw: Buffer;
  secure: boolean;
  helo: string;
  user: string | null;
  /** MAIL FROM's BODY parameter (`8BITMIME`), when given. */
  body: string | null;
}

export interface SinkConnection {
  id: string;
  helo: string;
  secure: boolean;
  user: string | null;
  transactions: number;
  open: boolean;
}

export interface SmtpSinkOptions {
  /** Offer STARTTLS with a self-signed certificate (else STARTTLS is not advertised). */
  tls?: boolean | { key: string; cert: string };
  /** Require AUTH PLAIN/LOGIN with these credentials before MAIL. */
  auth?: { user: string; pass: string };
  /** Guard for the wait* helpers so a broken test fails with a message instead of hanging. */
  waitTimeoutMs?: number;
}

export interface SmtpSink {
  host: string;
  port: number;
  messages: SinkMessage[];
  connections: SinkConnection[];
  /** Attempts of this address (sender or recipient, case-insensitive) follow `attempts` in order, then accept. */
  script(address: string, attempts: SinkAttempt[]): void;
  /** The next `count` connections are closed before the greeting; `421` answers with a 421 greeting instead. */
  refuseConnections(count?: number, how?: 'close' | '421'): void;
  /** The next `count` connections wait `ms` before the greeting. */
  stallGreeting(ms: number, count?: number): void;
  /** Drops every open client connection without a word, as a server ending idle sessions may. */
  dropConnections(): void;
  waitForMessages(n: number): Promise<SinkMessage[]>;
  waitForConnections(n: number): Promise<SinkConnection[]>;
  waitFor(predicate: () => boolean, what: string): Promise<void>;
  close(): Promise<void>;
}

let sharedCert: Promise<{ key: string; cert: string }> | undefined;

/** One self-signed certificate for 127.0.0.1/localhost, made once per test process. */
export function testCertificate(): Promise<{ key: string; cert: string }> {
  sharedCert ??= generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: false },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  }).then((pems) => ({ key: pems.private, cert: pems.cert }));
  return sharedCert;
}

function smtpError(reply: SinkReply): Error & { responseCode: number } {
  return Object.assign(new Error(reply.message), { responseCode: reply.code });
}

async function readAll(stream: SMTPServerDataStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * A scripted, recording SMTP server on 127.0.0.1 and an ephemeral port, built on smtp-server
 * so tests talk real SMTP. Every accepted message is recorded with its envelope and raw bytes.
 */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const waitTimeoutMs = options.waitTimeoutMs ?? 10_000;
  const messages: SinkMessage[] = [];
  const connections: SinkConnection[] = [];
  const byId = new Map<string, SinkConnection>();
  const scripts = new Map<string, SinkAttempt[]>();
  const used = new Map<string, number>();
  const sockets = new Map<number, Socket>();
  const timers = new Set<NodeJS.Timeout>();
  /** The attempt each session's current transaction follows for its DATA stage. */
  const dataAction = new Map<string, SinkAction | undefined>();
  let refuse = { count: 0, how: 'close' as 'close' | '421' };
  let stall = { count: 0, ms: 0 };

  const changed = (): void => {
    events.emit('change');
  };

  const nextAttempt = (address: string, role: 'mail' | 'rcpt'): SinkAttempt | undefined => {
    const key = `${role}:${address.toLowerCase()}`;
    const attempts = scripts.get(address.toLowerCase());
    const index = used.get(key) ?? 0;
    used.set(key, index + 1);
    return attempts?.[index];
  };

  const delay = (ms: number | undefined): Promise<void> =>
    new Promise((resolve) => {
      if (!ms) return resolve();
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  const perform = async (action: SinkAction | undefined): Promise<void> => {
    await delay(action?.stallMs);
    if (action?.until) await action.until;
    if (action?.reply) throw smtpError(action.reply);
  };

  const callbackOf =
    (callback: (err?: Error | null) => void) =>
    (promise: Promise<void>): void => {
      promise.then(
        () => callback(),
        (err: Error) => callback(err),
      );
    };

  const tls = options.tls === true ? await testCertificate() : options.tls || undefined;

  const server = new SMTPServer({
    logger: false,
    banner: 'smtp-sink ready',
    ...(tls ? { key: tls.key, cert: tls.cert } : { hideSTARTTLS: true }),
    authOptional: !options.auth,
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    // Hidden is not enough: smtp-server still answers STARTTLS with its built-in certificate.
    disabledCommands: [...(options.auth ? [] : ['AUTH']), ...(tls ? [] : ['STARTTLS'])],
    onConnect(session: SMTPServerSession, callback) {
      const connection: SinkConnection = {
        id: session.id,
        helo: '',
        secure: session.secure,
        user: null,
        transactions: 0,
        open: true,
      };
      connections.push(connection);
      byId.set(session.id, connection);
      changed();
      if (refuse.count > 0) {
        refuse.count--;
        if (refuse.how === '421') return callback(smtpError({ code: 421, message: '4.3.2 Service not available' }));
        sockets.get(session.remotePort)?.destroy();
        return;
      }
      if (stall.count > 0) {
        stall.count--;
        return callbackOf(callback)(delay(stall.ms));
      }
      callback();
    },
    onAuth(auth, session, callback) {
      const ok = options.auth && auth.username === options.auth.user && auth.password === options.auth.pass;
      if (!ok) return callback(smtpError({ code: 535, message: '5.7.8 Authentication credentials invalid' }));
      const connection = byId.get(session.id);
      if (connection) connection.user = auth.username ?? null;
      callback(null, { user: auth.username });
    },
    onMailFrom(address, session, callback) {
      dataAction.delete(session.id);
      callbackOf(callback)(perform(nextAttempt(address.address, 'mail')?.mail));
    },
    onRcptTo(address, session, callback) {
      const attempt = nextAttempt(address.address, 'rcpt');
      if (attempt?.data && !dataAction.has(session.id)) dataAction.set(session.id, attempt.data);
      callbackOf(callback)(perform(attempt?.rcpt));
    },
    onData(stream, session, callback) {
      const run = async (): Promise<void> => {
        const raw = await readAll(stream);
        const connection = byId.get(session.id);
        if (connection) {
          connection.transactions++;
          connection.helo = session.hostNameAppearsAs || '';
          connection.secure = session.secure;
        }
        await perform(dataAction.get(session.id));
        const envelope = session.envelope;
        messages.push({
          at: Date.now(),
          connectionId: session.id,
          from: envelope.mailFrom ? envelope.mailFrom.address : '',
          to: envelope.rcptTo.map((rcpt) => rcpt.address),
          raw,
          secure: session.secure,
          helo: session.hostNameAppearsAs || '',
          user: connection?.user ?? null,
          body: (envelope.mailFrom ? (envelope.mailFrom.args as { BODY?: string } | false) || {} : {}).BODY ?? null,
        });
        changed();
      };
      callbackOf(callback)(run());
    },
    onClose(session) {
      const connection = byId.get(session.id);
      if (connection) connection.open = false;
      changed();
    },
  });
  server.on('error', () => undefined);
  server.server.prependListener('connection', (socket: Socket) => {
    const port = socket.remotePort;
    if (port === undefined) return;
    sockets.set(port, socket);
    socket.once('close', () => {
      sockets.delete(port);
      changed();
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;

  const waitFor = (predicate: () => boolean, what: string): Promise<void> =>
    new Promise((resolve, reject) => {
      if (predicate()) return resolve();
      const check = (): void => {
        if (!predicate()) return;
        clearTimeout(guard);
        events.off('change', check);
        resolve();
      };
      const guard = setTimeout(() => {
        events.off('change', check);
        reject(new Error(`smtp sink: timed out waiting for ${what}`));
      }, waitTimeoutMs);
      events.on('change', check);
    });

  return {
    host: '127.0.0.1',
    port,
    messages,
    connections,
    script(address, attempts) {
      scripts.set(address.toLowerCase(), attempts);
    },
    refuseConnections(count = Number.POSITIVE_INFINITY, how = 'close') {
      refuse = { count, how };
    },
    stallGreeting(ms, count = Number.POSITIVE_INFINITY) {
      stall = { count, ms };
    },
    dropConnections() {
      for (const socket of sockets.values()) socket.destroy();
    },
    async waitForMessages(n) {
      await waitFor(() => messages.length >= n, `${n} messages (have ${messages.length})`);
      return messages;
    },
    async waitForConnections(n) {
      await waitFor(() => connections.length >= n, `${n} connections (have ${connections.length})`);
      return connections;
    },
    waitFor,
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const socket of sockets.values()) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
