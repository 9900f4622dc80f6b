import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createServices } from '../../src/services.ts';
import { CLI } from '../helpers/cli.ts';
import { STORES } from '../helpers/stores.ts';
import { crashConfigFile, crashDestination, crashSender } from '../helpers/crash.ts';

const MESSAGES = 500;

/** `mailsvc serve` as a child process; resolves with its HTTP port once it listens. */
async function serve(configFile: string): Promise<{ child: ChildProcess; port: number; log: () => string }> {
  const child = spawn(process.execPath, [CLI, '--config', configFile, 'serve', '--roles', 'api,delivery', '--http-port', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr!.on('data', (d) => {
      log += d;
      const m = /HTTP API listening on [\d.]+:(\d+)/.exec(log);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${log}`)));
  });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { child, port, log: () => log };
}

describe.each(STORES)('crash safety (%s)', (kind) => {
  it('SIGKILL mid-delivery, restart: every one of 500 recipients arrives, none more than twice, all delivered', { timeout: 90_000 }, async () => {
    const { dns, sink } = await crashDestination();
    // Each transaction waits 40 ms before its 250, so the kill lands while many are in flight.
    const addresses = Array.from({ length: MESSAGES }, (_, i) => `user${i}@dest.test`);
    for (const a of addresses) sink.script(a, [{ data: { stallMs: 40 } }]);

    const configFile = await crashConfigFile(kind, {
      log: { level: 'info' },
      dns: { servers: [dns.address], timeout: 1 },
      // A short lease so the restarted process takes the dead one's rows back within seconds.
      delivery: { port: sink.port, leaseSeconds: 2, maxConnectionsPerHost: 4 },
    });
    const apiKey = await crashSender(configFile);

    const first = await serve(configFile);
    const post = async (to: string) => {
      const res = await fetch(`http://127.0.0.1:${first.port}/api/v1/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from: 'news@acme.test', to, subject: `for ${to}`, text: 'hello' }),
      });
      expect(res.status).toBe(201);
    };
    for (let i = 0; i < MESSAGES; i += 50) await Promise.all(addresses.slice(i, i + 50).map(post));

    await sink.waitFor(() => sink.messages.length >= 50, '50 deliveries before the kill');
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    const atKill = sink.messages.length;
    expect(atKill).toBeLessThan(MESSAGES);

    const second = await serve(configFile);
    await sink.waitFor(() => new Set(sink.messages.map((m) => m.to[0])).size === MESSAGES, 'every recipient after the restart');
    // SIGTERM: the last transactions finish and their outcomes are committed before exit.
    second.child.kill('SIGTERM');
    const [code] = await once(second.child, 'exit');
    expect(code).toBe(0);

    const perRecipient = new Map<string, number>();
    for (const m of sink.messages) perRecipient.set(m.to[0]!, (perRecipient.get(m.to[0]!) ?? 0) + 1);
    expect(perRecipient.size).toBe(MESSAGES);
    expect(Math.max(...perRecipient.values())).toBeLessThanOrEqual(2);

    const check = await createServices(loadConfig({ file: configFile, env: {} }), { log: createLogger('silent') });
    const statuses = (await check.db('recipients').groupBy('status').select('status').count({ n: '*' })) as unknown as { status: string; n: number | string }[];
    const events = await check.db('events').where({ event: 'email.delivered' }).count({ n: '*' });
    await check.close();
    expect(statuses.map((s) => [s.status, Number(s.n)])).toStrictEqual([['delivered', MESSAGES]]);
    expect(Number(events[0]!.n)).toBe(MESSAGES);
  });
});
