import { randomBytes } from 'node:crypto';
import { BlockList, isIP, type Socket } from 'node:net';
import { parseCidr } from '../core/cidr.ts';
import type { Logger } from '../core/ports.ts';
import { clientKey } from '../ratelimit/connections.ts';
import { PROXY_HEADER_MAX, readProxyHeader } from './proxy-header.ts';

/**
 * What every SMTP listener (inbound, both submission ports) adds to smtp-server before a session
 * starts: the PROXY protocol from configured proxies only, so that the address the limits, the
 * loopback exemption and the AUTH failure counter see is the client's and not the proxy's; and,
 * on submission, AUTH neither offered nor started before TLS unless the client is exempt; and a
 * per-address limit and a deadline for connections that have not reached their session yet.
 *
 * smtp-server (3.21) reads a PROXY header itself (`useProxy`), but only version 1 and without a
 * deadline of its own, and matches proxies by exact address; a socket waiting for its implicit-TLS
 * handshake is held for the whole idle timeout (5 minutes) and is not counted per address, so a
 * few addresses could hold every slot by never starting TLS. Its hooks are replaced on the one
 * server instance given here, the rest of its accept path is kept.
 */

export interface ListenerGuardOptions {
  /** Peers (addresses or CIDRs) whose connections must start with a PROXY header; empty: none. */
  proxyFrom: readonly string[];
  /**
   * Time a new connection has to send its PROXY header and finish an implicit-TLS handshake,
   * the steps before smtp-server's own session (and its idle timeout) begins.
   */
  handshakeTimeoutMs: number;
  /** Connections one address may have in those steps at once (the listener's per-address limit). */
  maxPendingPerAddress: number;
  /**
   * Submission only: whether a client on this address may AUTH before TLS. When it may not, EHLO
   * does not offer AUTH and AUTH is answered 538 before any 334, so no key crosses in clear.
   */
  plainAuthAllowed?: (ip: string) => boolean;
  /**
   * Submission with trusted networks, where smtp-server's `authOptional` lets MAIL without AUTH
   * reach the desk and so turns off smtp-server's cap on commands before AUTH: whether this
   * client still gets that cap (one outside the trusted networks does).
   */
  capBeforeAuth?: (ip: string) => boolean;
  log: Logger;
}

/** smtp-server's own cap (`maxAllowedUnauthenticatedCommands`): the tenth command before AUTH gets 421. */
const COMMANDS_BEFORE_AUTH = 10;

interface Connection {
  secure: boolean;
  remoteAddress: string;
  session: { disabledCommands?: string[]; user?: unknown };
  send(code: number, data: string | string[], context?: unknown): void;
  _onCommand(command: Buffer, callback: () => void): void;
  /** Set while a STARTTLS handshake runs (what arrives then is dropped) and during a multi-line AUTH exchange. */
  _upgrading?: boolean;
  _nextHandler?: unknown;
  handler_EHLO(command: Buffer, callback: () => void): void;
  handler_AUTH(command: Buffer, callback: () => void): void;
  handler_PROXY?(command: Buffer, callback: () => void): void;
}

interface SocketOptions {
  id: string;
  remoteAddress?: string;
  remotePort?: number;
  ignore?: boolean;
}

type ProxyCallback = (err: Error | null, options?: SocketOptions) => void;

/** The parts of smtp-server's SMTPServer this module hooks into (smtp-server 3.21). */
export interface GuardableServer {
  options: { disabledCommands?: string[] };
  connections: Set<unknown>;
  _expectsProxyHeader(socket: Socket): boolean;
  _handleProxy(socket: Socket, callback: ProxyCallback): void;
  _acceptSocket(socket: Socket, handshake: boolean): (() => void) | false;
  /** Sockets before their session, each to its topmost socket (the TLS one once the handshake began). */
  _pendingSockets: Map<Socket, Socket>;
}

/** A list of addresses and CIDRs as a matcher; throws on an entry that is neither. */
export function addressMatcher(entries: readonly string[], setting = 'proxyProtocol.from'): (ip: string | undefined) => boolean {
  const list = new BlockList();
  for (const entry of entries) {
    const cidr = parseCidr(entry);
    if (!cidr) throw new Error(`${setting}: "${entry}" is not an IP address or CIDR`);
    list.addSubnet(cidr.address, cidr.prefix, cidr.family);
  }
  if (entries.length === 0) return () => false;
  return (ip) => {
    if (!ip) return false;
    const plain = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
    const family = isIP(plain);
    return family !== 0 && list.check(plain, family === 4 ? 'ipv4' : 'ipv6');
  };
}

const sessionId = () =>
  BigInt(`0x${randomBytes(10).toString('hex')}`)
    .toString(32)
    .padStart(16, '0');

export function guardListener(target: unknown, options: ListenerGuardOptions): void {
  const server = target as GuardableServer;
  const fromProxy = addressMatcher(options.proxyFrom);
  const log = options.log;
  const ownHandleProxy = server._handleProxy.bind(server);

  server._expectsProxyHeader = (socket) => fromProxy(socket.remoteAddress);

  // Counted by the peer's own address: a proxy's clients are counted by theirs once named, in the session.
  const pending = new Map<string, number>();
  const ownAcceptSocket = server._acceptSocket.bind(server);
  server._acceptSocket = (socket, handshake) => {
    const proxy = fromProxy(socket.remoteAddress);
    if (!handshake && !proxy) return ownAcceptSocket(socket, handshake);
    const ip = clientKey(socket.remoteAddress ?? '');
    if (!proxy && (pending.get(ip) ?? 0) >= options.maxPendingPerAddress) {
      // Nothing can be written before the TLS handshake: the connection is dropped.
      log.info({ phase: 'connect', ip, pending: pending.get(ip) }, 'too many connections before TLS from this address');
      socket.on('error', () => undefined);
      socket.destroy();
      return false;
    }
    const release = ownAcceptSocket(socket, handshake);
    if (!release) return false;
    if (!proxy) pending.set(ip, (pending.get(ip) ?? 0) + 1);
    const deadline = setTimeout(() => {
      log.info({ phase: 'connect', ip }, `no TLS handshake or PROXY header within ${options.handshakeTimeoutMs} ms`);
      // The topmost socket: destroying the raw one under a TLS handshake in progress crashes Node.
      (server._pendingSockets.get(socket) ?? socket).destroy();
    }, options.handshakeTimeoutMs);
    let released = false;
    const ours = () => {
      if (released) return;
      released = true;
      clearTimeout(deadline);
      socket.off('close', ours);
      if (!proxy) {
        const open = (pending.get(ip) ?? 1) - 1;
        if (open <= 0) pending.delete(ip);
        else pending.set(ip, open);
      }
      release();
    };
    socket.once('close', ours);
    return ours;
  };

  server._handleProxy = (socket, callback) => {
    if (!fromProxy(socket.remoteAddress)) return ownHandleProxy(socket, callback);
    let buffered = Buffer.alloc(0);
    let finished = false;
    const finish = (err: Error | null, socketOptions?: SocketOptions) => {
      if (finished) return;
      finished = true;
      socket.off('readable', onReadable);
      socket.off('error', fail);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      if (err) {
        log.info({ phase: 'proxy', proxy: socket.remoteAddress, reason: err.message }, 'PROXY header refused');
        socket.on('error', () => undefined);
        socket.destroy();
      }
      callback(err, socketOptions);
    };
    const fail = (err: Error) => finish(err);
    // A proxy that never finishes its header is closed by the deadline of `_acceptSocket` above.
    const onEnd = () => finish(new Error('closed before the PROXY header'));
    const onReadable = () => {
      for (let chunk = socket.read() as Buffer | null; chunk !== null && !finished; chunk = socket.read() as Buffer | null) {
        buffered = Buffer.concat([buffered, chunk]);
        const read = readProxyHeader(buffered.subarray(0, PROXY_HEADER_MAX));
        if (read === 'incomplete') {
          if (buffered.length >= PROXY_HEADER_MAX) return finish(new Error(`PROXY header over ${PROXY_HEADER_MAX} bytes`));
          continue;
        }
        if ('problem' in read) return finish(new Error(read.problem));
        const rest = buffered.subarray(read.length);
        if (rest.length > 0) socket.unshift(rest);
        const client = read.client ?? { address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 };
        return finish(null, { id: sessionId(), remoteAddress: client.address, remotePort: client.port, ignore: false });
      }
    };
    socket.on('readable', onReadable);
    socket.on('error', fail);
    socket.on('end', onEnd);
    socket.on('close', onEnd);
  };

  // Every connection passes through `connections.add` before its greeting: the place to give it
  // the commands below, whichever subclass built it.
  const add = server.connections.add.bind(server.connections);
  server.connections.add = (value: unknown) => {
    decorate(value as Connection);
    return add(value);
  };

  function decorate(connection: Connection): void {
    // A PROXY line from a peer that is not a configured proxy, or a second one: never believed.
    connection.handler_PROXY = (_command, callback) => {
      log.info({ phase: 'proxy', ip: connection.remoteAddress }, 'PROXY header from a client that is not a configured proxy');
      connection.send(421, '4.7.0 PROXY header not accepted from this address');
      callback();
    };
    if (options.capBeforeAuth?.(connection.remoteAddress)) capCommandsBeforeAuth(connection);
    const allowed = options.plainAuthAllowed;
    if (!allowed) return;
    const ehlo = connection.handler_EHLO.bind(connection);
    const auth = connection.handler_AUTH.bind(connection);
    const inClear = () => !connection.secure && !allowed(connection.remoteAddress);
    connection.handler_EHLO = (command, callback) => {
      if (!inClear()) return ehlo(command, callback);
      // smtp-server offers AUTH unless the session disables it; disabled only while EHLO answers,
      // so that AUTH itself still reaches the 538 below rather than "command not recognized".
      const session = connection.session;
      const before = session.disabledCommands;
      const restore = () => {
        session.disabledCommands = before;
      };
      session.disabledCommands = [...(server.options.disabledCommands ?? []), 'AUTH'];
      try {
        ehlo(command, () => {
          restore();
          callback();
        });
      } finally {
        restore();
      }
    };
    connection.handler_AUTH = (command, callback) => {
      // RFC 4954 §6 and RFC 3207 §4: refused before the mechanism asks for anything.
      if (inClear()) {
        connection.send(538, '5.7.11 Encryption required: issue STARTTLS before AUTH');
        return callback();
      }
      auth(command, callback);
    };
  }
}

/**
 * Counts as smtp-server does when AUTH is required: every command but AUTH while the session has
 * no user, not what arrives during a STARTTLS handshake nor the lines of an AUTH exchange.
 */
function capCommandsBeforeAuth(connection: Connection): void {
  const onCommand = connection._onCommand.bind(connection);
  let count = 0;
  connection._onCommand = (command, callback) => {
    const counted = !connection.session.user && !connection._upgrading && !connection._nextHandler;
    const name = command.toString('latin1', 0, 5).split(' ')[0]!.toUpperCase();
    if (counted && name !== 'AUTH' && ++count >= COMMANDS_BEFORE_AUTH) {
      return connection.send(421, '4.7.0 Too many commands without authentication');
    }
    onCommand(command, callback);
  };
}
