/**
 * POST /emails with 1,000 recipients whose display names hold a run of 960 spaces (the input a
 * quadratic display-name pattern stalled on), against the reference: a body of the same size
 * whose names hold letters instead. Each request is answered 201; times are per request,
 * client and server in one process on SQLite (WAL, synchronous=FULL).
 *
 *   npx tsx bench/hostile-addresses.ts [rounds=20]
 */
import { createLogger } from '../src/log/logger.ts';
import { startServer } from '../src/main.ts';
import { benchConfig, benchSender } from './setup.ts';

const rounds = Number(process.argv[2] ?? 20);
const { config, cleanUp } = benchConfig({ http: { host: '127.0.0.1', port: 0 } });
const server = await startServer(config, { roles: ['api'], overrides: { log: createLogger('silent') } });
const { services } = server;
const { apiKey, domain } = await benchSender(services);

const body = (filler: string) =>
  JSON.stringify({ from: `news@${domain}`, to: Array.from({ length: 1000 }, () => `a${filler}b <u@dest.example>`), subject: 'Hi', text: 'Hello' });

async function time(payload: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    const res = await fetch(`${server.url}/api/v1/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: payload,
    });
    await res.arrayBuffer();
    if (res.status !== 201) throw new Error(`answered ${res.status}`);
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

const summary = (times: number[]) => ({
  median_ms: Number(times[Math.floor(times.length / 2)].toFixed(1)),
  max_ms: Number(times[times.length - 1].toFixed(1)),
});
const hostile = body(' '.repeat(960));
const reference = body('x'.repeat(960));
console.log(
  JSON.stringify({
    body_bytes: hostile.length,
    rounds,
    spaces: summary(await time(hostile)),
    reference: summary(await time(reference)),
  }),
);
await server.close();
cleanUp();
