import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Logger } from '../../src/core/ports.ts';
import { startServer } from '../../src/main.ts';
import { scratchStore } from '../helpers/stores.ts';
import { testConfig } from '../helpers/server.ts';

/** `mailsvc serve`'s API role with request logs on, its log lines collected as parsed JSON. */
async function loggingServer() {
  const store = await scratchStore('sqlite');
  const lines: Record<string, any>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  const log = pino({ level: 'info' }, sink) as unknown as Logger;
  const server = await startServer(testConfig(store), { roles: ['api'], logRequests: true, overrides: { log } });
  onTestFinished(async () => {
    await server.close();
    await store.drop();
  });
  return { url: server.url!, requestLines: () => lines.filter((l) => l.reqId !== undefined) };
}

describe('request logs', () => {
  it('write one line per request, when it completes, with the request and its outcome', async () => {
    const { url, requestLines } = await loggingServer();
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const refused = await fetch(`${url}/api/v1/emails`, { method: 'POST', headers: { authorization: 'Bearer mk_forged' }, body: '{}' });
    expect(refused.status).toBe(401);

    const lines = requestLines();
    expect(lines.map((l) => l.msg)).toStrictEqual(['request completed', 'request completed']);
    expect(lines.map((l) => [l.req.method, l.req.url, l.res.statusCode])).toStrictEqual([
      ['GET', '/healthz', 200],
      ['POST', '/api/v1/emails', 401],
    ]);
    for (const line of lines) {
      expect(line.req.remoteAddress).toBe('127.0.0.1');
      expect(typeof line.responseTime).toBe('number');
      expect(line.level).toBe(30);
    }
    expect(new Set(lines.map((l) => l.reqId)).size).toBe(2);
    // The key is never logged, not even a forged one.
    expect(JSON.stringify(lines)).not.toContain('mk_forged');
  });

  it('still report a route that does not exist, on top of its one line', async () => {
    const { url, requestLines } = await loggingServer();
    expect((await fetch(`${url}/no-such-page`)).status).toBe(404);
    const lines = requestLines();
    expect(lines.filter((l) => l.msg === 'request completed').map((l) => [l.req.url, l.res.statusCode])).toStrictEqual([['/no-such-page', 404]]);
    expect(lines.filter((l) => l.msg === 'incoming request')).toStrictEqual([]);
  });
});

describe('request logs, redacted', () => {
  it('never hold a query string or a whole tracking token', async () => {
    const { url, requestLines } = await loggingServer();
    const key = 'mk_0123456789abcdefghijABCDEFGHIJ';
    const token = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567ABCDEFGH';
    expect((await fetch(`${url}/api/v1/emails?api_key=${key}&limit=5`)).status).toBe(401);
    expect((await fetch(`${url}/t/o/${token}`)).status).toBe(404);
    expect((await fetch(`${url}/t/c/${token}?utm=x`)).status).toBe(404);
    expect((await fetch(`${url}/t/u/${token}`, { method: 'POST', body: 'List-Unsubscribe=One-Click' })).status).toBe(404);
    expect((await fetch(`${url}/t/o/short`)).status).toBe(404);
    expect((await fetch(`${url}/no-such-page?api_key=${key}`)).status).toBe(404);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    const lines = requestLines();
    expect(lines.filter((l) => l.req).map((l) => l.req.url)).toStrictEqual([
      '/api/v1/emails?[redacted]',
      '/t/o/ABCDEFGH...',
      '/t/c/ABCDEFGH...?[redacted]',
      '/t/u/ABCDEFGH...',
      '/t/o/short',
      '/no-such-page?[redacted]',
      '/healthz',
    ]);
    const all = JSON.stringify(lines);
    expect(all).not.toContain(key);
    expect(all).not.toContain(key.slice(3, 20));
    expect(all).not.toContain(token.slice(0, 12));
    for (const line of lines.filter((l) => l.req)) expect(line.req.remoteAddress).toBe('127.0.0.1');
  });
});
