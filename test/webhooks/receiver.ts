import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { onTestFinished } from 'vitest';

export interface Received {
  headers: IncomingMessage['headers'];
  raw: Buffer;
  at: number;
}

/** What the receiver does with the n-th request (0-based): answer, or never answer. */
export type Answer = { status: number; body?: string; headers?: Record<string, string> } | 'hang';

export interface Receiver {
  url: string;
  requests: Received[];
  answer: (req: Received, n: number) => Answer;
  /** Resolves once `n` requests have arrived; fails after `timeoutMs`. */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
}

/** A webhook receiver on loopback that keeps every request's raw bytes. */
export async function startReceiver(answer: Receiver['answer'] = () => ({ status: 200, body: 'ok' })): Promise<Receiver> {
  const waiters: (() => void)[] = [];
  const sockets = new Set<Socket>();
  const receiver: Receiver = {
    url: '',
    requests: [],
    answer,
    waitFor(n, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${receiver.requests.length} of ${n} requests`)), timeoutMs);
        const check = () => {
          if (receiver.requests.length < n) return waiters.push(check);
          clearTimeout(timer);
          resolve(receiver.requests.slice(0, n));
        };
        check();
      });
    },
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const got: Received = { headers: req.headers, raw: Buffer.concat(chunks), at: Date.now() };
      const n = receiver.requests.length;
      receiver.requests.push(got);
      for (const w of waiters.splice(0)) w();
      const a = receiver.answer(got, n);
      if (a === 'hang') return;
      res.writeHead(a.status, { 'content-type': 'text/plain', ...a.headers });
      res.end(a.body ?? '');
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  return receiver;
}

/** What a receiver does: recompute over the raw body, compare in constant time. */
export function signatureValid(req: Received, secret: string): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(req.raw).digest('hex')}`);
  const given = Buffer.from(String(req.headers['x-service-signature'] ?? ''));
  return expected.length === given.length && timingSafeEqual(expected, given);
}
