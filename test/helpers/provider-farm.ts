import { EventEmitter } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import { systemClock, type Clock } from '../../src/core/ports.ts';
import { PromptGreetingServer } from '../../src/submission/prompt-greeting.ts';
import type { TestDns } from './dns-server.ts';
import {
  FarmProvider,
  type BehaviourChange,
  type FarmAccepted,
  type FarmBehaviour,
  type FarmConnection,
  type FarmProviderSpec,
  type FarmReply,
  type ProviderStats,
} from './farm-provider.ts';

export type { BehaviourChange, FarmAccepted, FarmBehaviour, FarmProviderSpec, ProviderStats } from './farm-provider.ts';
export { mostInWindow } from './farm-provider.ts';

export interface ProviderFarmOptions {
  dns: TestDns;
  providers: FarmProviderSpec[];
  /** The one port every sink listens on (delivery uses one port for every MX); default: a free one. */
  port?: number;
  /** Times of accepts and refusals, the rate windows and blocks; default: the system clock. */
  clock?: Clock;
  /** Default guard of the wait helpers. */
  waitTimeoutMs?: number;
}

export interface ProviderFarm {
  port: number;
  provider(name: string): ProviderStats;
  providers(): ProviderStats[];
  /** Every accepted message of every provider, in the order they were accepted. */
  accepted(): readonly FarmAccepted[];
  totalAccepted(): number;
  /** Messages accepted more than once: each entry is a repeat of an earlier (Message-ID, recipient). */
  duplicates(): FarmAccepted[];
  waitForTotal(n: number, timeoutMs?: number): Promise<void>;
  waitFor(predicate: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  setBehaviour(name: string, change: BehaviourChange): void;
  /** Adds recipient domains to a provider, with their MX records. */
  addDomains(name: string, domains: string[]): void;
  close(): Promise<void>;
}

interface Open {
  provider: FarmProvider;
  connection: FarmConnection;
  socket: Socket;
}

/**
 * `count` unrelated receivers, each a provider of its own (`hostK`, MX `mx.hostK.test`, domain
 * `hostK.test`) on an address of its own in 127.1.0.0/16, so that connections are counted per
 * host: a sink sees only the address a client dialled, never the MX name it looked up.
 */
export function independentHosts(count: number, behaviour: FarmBehaviour = {}, first = 1): FarmProviderSpec[] {
  return Array.from({ length: count }, (_, i) => {
    const k = first + i;
    const index = k - 1;
    return {
      ...behaviour,
      name: `host${k}`,
      address: `127.1.${Math.floor(index / 250)}.${(index % 250) + 1}`,
      mxHosts: [`mx.host${k}.test`],
      domains: [`host${k}.test`],
    };
  });
}

function smtpError(reply: FarmReply): Error & { responseCode: number } {
  return Object.assign(new Error(reply.message), { responseCode: reply.code });
}

function socketKey(local: string | undefined, remote: string | undefined, remotePort: number | undefined): string {
  return `${local}|${remote}|${remotePort}`;
}

/** The Message-ID of the header block (trusted input: our own delivery wrote it). */
function messageIdOf(raw: Buffer): string | null {
  const end = raw.indexOf('\r\n\r\n');
  const header = raw.subarray(0, end < 0 ? raw.length : end).toString('latin1');
  const match = /(?:^|\n)message-id:[ \t]*(<[^>\r\n]*>)/i.exec(header);
  return match ? match[1]! : null;
}

async function readAll(stream: SMTPServerDataStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function listen(address: string, port: number, onSocket: (socket: Socket) => void): Promise<Server> {
  const server = createServer(onSocket);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: address, port }, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * Listeners on every address at one port. The port is the one the kernel picks for the first
 * address; another test process may hold it on a later address, so that case starts over.
 */
async function listenAll(addresses: string[], port: number | undefined, onSocket: (address: string) => (socket: Socket) => void) {
  for (let attempt = 1; ; attempt++) {
    const servers: Server[] = [];
    try {
      for (const address of addresses) {
        const chosen = servers.length === 0 ? (port ?? 0) : (servers[0]!.address() as AddressInfo).port;
        servers.push(await listen(address, chosen, onSocket(address)));
      }
      return { servers, port: (servers[0]!.address() as AddressInfo).port };
    } catch (err) {
      await Promise.all(servers.map(closeServer));
      if (port !== undefined || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 20) throw err;
    }
  }
}

function registerDns(dns: TestDns, spec: Pick<FarmProviderSpec, 'address' | 'mxHosts'>, domains: string[]): void {
  for (const host of spec.mxHosts) dns.set(host, 'A', spec.address);
  const records = spec.mxHosts.map((exchange, i) => ({ exchange, priority: 10 * (i + 1) }));
  for (const domain of domains) dns.set(domain, 'MX', records);
}

/**
 * Mail providers on loopback for tests and benchmarks: one SMTP sink per provider, each on its
 * own 127.0.0.x address and all on one port, with their MX and A records in `dns`. Each enforces
 * the limits of its spec the way providers do (421 at the greeting beyond its connections, a
 * throttling reply at RCPT beyond its rate, a temporary block) and records every connection,
 * acceptance and refusal. One smtp-server instance serves every listener; the address a
 * connection arrived on names its provider.
 */
export async function startProviderFarm(options: ProviderFarmOptions): Promise<ProviderFarm> {
  const clock = options.clock ?? systemClock;
  const waitTimeoutMs = options.waitTimeoutMs ?? 10_000;
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const changed = (): void => void events.emit('change');
  const all: FarmAccepted[] = [];
  const byName = new Map<string, FarmProvider>();
  const byAddress = new Map<string, FarmProvider>();
  const specs = new Map<string, FarmProviderSpec>();
  for (const spec of options.providers) {
    if (byName.has(spec.name)) throw new Error(`provider farm: two providers named ${spec.name}`);
    if (byAddress.has(spec.address)) throw new Error(`provider farm: ${spec.name} and ${byAddress.get(spec.address)!.name} share ${spec.address}`);
    const provider = new FarmProvider(spec, clock, (message) => all.push(message));
    byName.set(spec.name, provider);
    byAddress.set(spec.address, provider);
    specs.set(spec.name, spec);
  }

  const arriving = new Map<string, Open>();
  const sessions = new Map<string, Open>();
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const delay = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (ms <= 0) return resolve();
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  const server = new PromptGreetingServer({
    logger: false,
    banner: 'provider farm',
    hideSTARTTLS: true,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    disableReverseLookup: true,
    onConnect(session: SMTPServerSession, callback) {
      const key = socketKey(session.localAddress, session.remoteAddress, session.remotePort);
      const open = arriving.get(key);
      arriving.delete(key);
      if (!open) return callback(smtpError({ code: 421, message: '4.3.2 Unknown listener' }));
      open.connection.id = session.id;
      sessions.set(session.id, open);
      const refusal = open.provider.admit(open.connection);
      changed();
      callback(refusal ? smtpError(refusal) : undefined);
    },
    onRcptTo(address, session, callback) {
      const open = sessions.get(session.id);
      if (!open) return callback(smtpError({ code: 421, message: '4.3.2 Unknown session' }));
      const refusal = open.provider.checkRecipient(open.connection, address.address);
      if (!refusal) return callback();
      changed();
      callback(smtpError(refusal));
      // RFC 5321 §3.8: 421 closes the channel, and the providers' throttling replies do.
      if (refusal.code === 421) open.socket.end();
    },
    onData(stream, session, callback) {
      const run = async (): Promise<void> => {
        const raw = await readAll(stream);
        const open = sessions.get(session.id);
        if (!open) throw smtpError({ code: 451, message: '4.3.2 Unknown session' });
        await delay(open.provider.latencyMs);
        const messageId = messageIdOf(raw);
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        const helo = session.hostNameAppearsAs || '';
        for (const rcpt of session.envelope.rcptTo) open.provider.accept(open.connection, { from, to: rcpt.address, messageId, helo });
        changed();
      };
      run().then(
        () => callback(),
        (err: Error) => callback(err),
      );
    },
  });
  server.on('error', () => undefined);

  const onSocket = (address: string) => {
    const provider = byAddress.get(address)!;
    return (socket: Socket): void => {
      const connection = provider.opened(socket.remoteAddress ?? '');
      const key = socketKey(socket.localAddress, socket.remoteAddress, socket.remotePort);
      const open: Open = { provider, connection, socket };
      arriving.set(key, open);
      sockets.add(socket);
      socket.once('close', () => {
        arriving.delete(key);
        if (connection.id) sessions.delete(connection.id);
        sockets.delete(socket);
        provider.closed(connection);
        changed();
      });
      changed();
      server.connect(socket, {});
    };
  };

  const { servers, port } = await listenAll([...byAddress.keys()], options.port, onSocket);
  for (const spec of options.providers) registerDns(options.dns, spec, spec.domains);

  const named = (name: string): FarmProvider => {
    const provider = byName.get(name);
    if (!provider) throw new Error(`provider farm: no provider named ${name} (have ${[...byName.keys()].join(', ')})`);
    return provider;
  };

  const waitFor = (predicate: () => boolean, what: string, timeoutMs = waitTimeoutMs): Promise<void> =>
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
        reject(new Error(`provider farm: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      events.on('change', check);
    });

  const counts = (): string => [...byName.values()].map((p) => `${p.name}: ${p.accepted.length} accepted, ${p.refused.length} refused, ${p.connections} open`).join('; ');

  return {
    port,
    provider: named,
    providers: () => [...byName.values()],
    accepted: () => all,
    totalAccepted: () => all.length,
    duplicates() {
      const seen = new Set<string>();
      const repeats: FarmAccepted[] = [];
      for (const message of all) {
        const key = `${message.messageId ?? ''}\n${message.to.toLowerCase()}`;
        if (seen.has(key)) repeats.push(message);
        else seen.add(key);
      }
      return repeats;
    },
    async waitForTotal(n, timeoutMs) {
      try {
        await waitFor(() => all.length >= n, `${n} accepted messages`, timeoutMs);
      } catch (err) {
        throw new Error(`${(err as Error).message}; have ${all.length} (${counts()})`, { cause: err });
      }
    },
    waitFor,
    setBehaviour(name, change) {
      named(name).change(change);
    },
    addDomains(name, domains) {
      named(name).addDomains(domains);
      registerDns(options.dns, specs.get(name)!, domains);
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const closing = servers.map(closeServer);
      for (const socket of sockets) socket.destroy();
      await Promise.all(closing);
    },
  };
}
