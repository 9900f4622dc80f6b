import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { generate } from 'selfsigned';
import { onTestFinished } from 'vitest';

/** A certificate for the given names, self-signed so that it is its own trust anchor. */
export async function certificateFor(names: string[]): Promise<{ key: string; cert: string }> {
  const pems = await generate([{ name: 'commonName', value: names[0]! }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'subjectAltName', altNames: names.map((value) => ({ type: 2, value })) },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

/** Writes PEM text to a scratch file, for `tls.trustedCAs`. */
export function pemFile(pem: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'mailsvc-ca-')), 'trusted.pem');
  writeFileSync(file, pem);
  return file;
}

/** What the server does with a request: answer a policy, a status with headers, hold it forever, or stream endless bytes. */
export type PolicyAnswer = { policy: string; contentType?: string } | { status: number; headers?: Record<string, string> } | { hang: true } | { flood: true };

export interface PolicyServer {
  port: number;
  /** Each request's Host header and path, in order. */
  requests: { host: string; path: string }[];
  /** When each request arrived (epoch ms). */
  arrivals: number[];
  /** The answer for `mta-sts.<domain>` (by Host header). */
  answer(domain: string, answer: PolicyAnswer): void;
  /** Bytes the flood answers wrote before the client hung up. */
  floodBytes(): number;
  /** When the first request's connection was closed (epoch ms). */
  firstClose: Promise<number>;
}

/** An HTTPS server on 127.0.0.1, port 0, serving MTA-STS policies by Host header; closed after the test. */
export async function startPolicyServer(tls: { key: string; cert: string }): Promise<PolicyServer> {
  const answers = new Map<string, PolicyAnswer>();
  const requests: PolicyServer['requests'] = [];
  const arrivals: number[] = [];
  const sockets = new Set<Socket>();
  let flooded = 0;
  let notifyClosed: (at: number) => void = () => {};
  const firstClose = new Promise<number>((resolve) => (notifyClosed = resolve));
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const server: Server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    requests.push({ host, path: req.url ?? '' });
    arrivals.push(Date.now());
    req.socket.once('close', () => notifyClosed(Date.now()));
    const answer = answers.get(host.replace(/^mta-sts\./, '')) ?? { status: 404 };
    if ('hang' in answer) return;
    if ('flood' in answer) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const pump = (): void => {
        // 100 MB at most, as a hostile or broken server might send.
        while (flooded < 100 * 1024 * 1024 && !res.destroyed) {
          flooded += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
      return;
    }
    if ('policy' in answer) {
      res.writeHead(200, { 'content-type': answer.contentType ?? 'text/plain' });
      return res.end(answer.policy);
    }
    res.writeHead(answer.status, answer.headers ?? {});
    res.end();
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return {
    port: (server.address() as { port: number }).port,
    requests,
    arrivals,
    answer: (domain, answer) => answers.set(domain, answer),
    floodBytes: () => flooded,
    firstClose,
  };
}
