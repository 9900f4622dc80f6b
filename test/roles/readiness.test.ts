import { createServer, connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { spawnServe } from '../helpers/process.ts';
import { testConfig } from '../helpers/server.ts';
import { scratchStore } from '../helpers/stores.ts';
import { createLogger } from '../../src/log/logger.ts';
import { Readiness, ROLE_STARTERS } from '../../src/roles/index.ts';
import { createServices } from '../../src/services.ts';

/** A port nothing listens on right now (the kernel's choice), for a child that must not use 0. */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** Resolves with the first line the server sends (an SMTP greeting), rejects on a refusal. */
function greeting(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      text += d;
      if (text.includes('\r\n')) {
        socket.destroy();
        resolve(text.split('\r\n')[0]!);
      }
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`closed before a greeting: ${JSON.stringify(text)}`)));
  });
}

const settle = (p: Promise<unknown>) =>
  p.then(
    (v) => `ok ${String(v).slice(0, 3)}`,
    (err: NodeJS.ErrnoException) => `failed ${err.code ?? err.message}`,
  );

describe('/healthz as readiness', () => {
  it('says 200 only once every listener of `serve` accepts, on a fresh data directory; 503 names the roles still starting', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailsvc-ready-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    // The SMTP ports are fixed before the start: the moment /healthz says 200 is the moment to
    // connect, with no log line to wait for.
    const [submission, submissions, inbound] = [await freePort(), await freePort(), await freePort()];
    const file = join(dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        dataDir: join(dir, 'data'), // fresh: the TLS certificate is generated at this start
        server: { hostname: 'mail.healthz.test' },
        http: { host: '127.0.0.1' },
        submission: { host: '127.0.0.1', port: submission, tlsPort: submissions },
        inbound: { host: '127.0.0.1', port: inbound },
      }),
    );
    const serve = await spawnServe(file);

    const notReady: string[] = [];
    let res: Response;
    for (;;) {
      res = await fetch(`${serve.url}/healthz`);
      if (res.status === 200) break;
      expect(res.status).toBe(503);
      notReady.push(((await res.json()) as { error: string }).error);
      // As a script would poll; no event outside the process says when it is ready.
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const at200 = await Promise.all([
      settle(fetch(`${serve.url}/api/v1/emails`).then((r) => r.status)),
      settle(greeting(tcpConnect(submission, '127.0.0.1'))),
      settle(greeting(tlsConnect({ port: submissions, host: '127.0.0.1', rejectUnauthorized: false }))),
      settle(greeting(tcpConnect(inbound, '127.0.0.1'))),
    ]);
    expect(await res.json()).toStrictEqual({ status: 'ok' });
    expect(at200).toStrictEqual(['ok 401', 'ok 220', 'ok 220', 'ok 220']);

    // While anything was starting, the answer named it.
    for (const error of notReady) expect(error).toMatch(/^Not ready: (api|submission|inbound|delivery|webhooks)(, (submission|inbound|delivery|webhooks))*$/);

    expect(await serve.stop()).toBe(0);
    const lines = serve
      .log()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string });
    expect(lines.filter((l) => /\bready\b/i.test(l.msg)).map((l) => l.msg)).toStrictEqual(['ready: api, submission, inbound, delivery, webhooks']);
  });
});

describe('/healthz names the roles not running', () => {
  it('503 naming each role until it reports, 200 once all have, 503 again once one stops', async () => {
    const store = await scratchStore('sqlite');
    const services = await createServices(testConfig(store), { log: createLogger('silent') });
    const readiness = new Readiness(['api', 'submission', 'delivery']);
    const api = await ROLE_STARTERS.api(services, { readiness });
    onTestFinished(async () => {
      await api.close();
      await services.close();
      await store.drop();
    });
    const health = async () => {
      const res = await fetch(`http://127.0.0.1:${api.ports.http}/healthz`);
      return [res.status, await res.json()];
    };

    expect(await health()).toStrictEqual([503, { error: 'Not ready: api, submission, delivery' }]);
    readiness.started('api');
    readiness.started('delivery');
    expect(await health()).toStrictEqual([503, { error: 'Not ready: submission' }]);
    readiness.started('submission');
    expect(await health()).toStrictEqual([200, { status: 'ok' }]);
    // Shutting down: the first role to stop accepting makes the process not ready.
    readiness.stopping('submission');
    expect(await health()).toStrictEqual([503, { error: 'Not ready: submission' }]);
  });
});
