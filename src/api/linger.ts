import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** How much of a body is read and thrown away after an answer sent before it all arrived. */
export interface LingerBounds {
  /** Bytes discarded at most; then the connection is closed at once. */
  bytes: number;
  /** How long at most, in all (nginx's `lingering_time`, 30 s by default). */
  totalMs: number;
  /** How long at most with nothing received (nginx's `lingering_timeout`, 5 s by default). */
  idleMs: number;
}

/** What an operator sees of it (`/metrics`). */
export interface LingerReport {
  discarded(bytes: number): void;
  /** A connection starts (+1) or stops (-1) discarding. */
  lingering(delta: 1 | -1): void;
}

/**
 * An answer sent before the request body has all arrived (a 413 on its Content-Length or part way
 * through, a 401 before an upload) must still reach the client. Node closes a `Connection: close`
 * answer's socket as soon as the answer is flushed; the body still arriving then meets a reset,
 * and a reset makes the client's kernel drop what the client had not read yet: Node's
 * `http.request`, writing the body before it reads, fails with `write EPIPE` instead of showing
 * the 413. So, as nginx does (`lingering_close`), the rest of the body is read and discarded after
 * the answer, within `bounds`, and the connection is closed only once the body has ended (a clean
 * close) or a bound is reached (the client, reading as it writes, has had the answer long since).
 * A keep-alive answer (a 401) keeps its connection once the body has ended. A shutdown does not
 * wait for it: with its answer sent, the connection counts as idle to the server's close.
 */
export function installLingeringClose(app: FastifyInstance, bounds: LingerBounds, report: LingerReport): void {
  app.addHook('onSend', async (request, _reply, payload) => {
    const req = request.raw;
    if (!req.complete && !req.destroyed) linger(req, req.socket, bounds, report);
    return payload;
  });
}

function linger(req: IncomingMessage, socket: Socket, bounds: LingerBounds, report: LingerReport): void {
  let bytes = 0;
  let closing = false;
  let over = false;
  report.lingering(1);
  const stop = () => socket.destroy();
  const total = setTimeout(stop, bounds.totalMs);
  const idle = setTimeout(stop, bounds.idleMs);
  const onData = (chunk: Buffer) => {
    bytes += chunk.length;
    report.discarded(chunk.length);
    idle.refresh();
    if (bytes > bounds.bytes) stop();
  };
  const done = () => {
    if (over) return;
    over = true;
    report.lingering(-1);
    clearTimeout(total);
    clearTimeout(idle);
    req.off('data', onData);
    Reflect.deleteProperty(socket, 'destroySoon');
  };
  // Node ends a `Connection: close` answer with socket.destroySoon() (see resOnFinish in
  // node:_http_server): here that only ends our side, after the answer, and reading goes on.
  socket.destroySoon = () => {
    closing = true;
    socket.end();
  };
  req.on('data', onData);
  req.once('end', () => {
    done();
    // Everything the client sent has been read, so closing now sends no reset.
    if (closing) {
      if (socket.writableFinished) socket.destroy();
      else socket.once('finish', () => socket.destroy());
    }
  });
  socket.once('close', done);
  req.resume();
}
