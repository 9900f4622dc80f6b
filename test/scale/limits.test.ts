import { describe, expect, it } from 'vitest';
import { arrivals, CLUSTER_PG, startCluster } from '../helpers/cluster.ts';
import { until } from '../webhooks/world.ts';

const mail = (to: string) => ({ from: 'news@acme.test', to, subject: `for ${to}`, text: 'hello' });

describe.skipIf(!CLUSTER_PG)('limits and idempotency shared by three serve processes', () => {
  it('a limit of 60 per minute holds across processes: 120 requests with one key spread over three yield exactly 60 accepted', { timeout: 60_000 }, async () => {
    const cluster = await startCluster({ roles: 'api', limits: { perMinute: 60, perHour: 1000 } });
    const results = await Promise.all(Array.from({ length: 120 }, (_, i) => cluster.send(i % 3, mail(`user${i}@dest.test`))));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(60);
    expect(statuses.filter((s) => s === 429)).toHaveLength(60);
    const [row] = await cluster.services.db('messages').count({ n: '*' });
    expect(Number(row!.n)).toBe(60);
    // Each process adds to its own row of the day's usage; the report adds them up.
    expect((await cluster.services.usage.report(cluster.workspaceId, {})).totals).toStrictEqual({ transactional: 60, broadcast: 0 });
  });

  it('the same Idempotency-Key sent concurrently to all three processes yields one message, delivered once', { timeout: 60_000 }, async () => {
    const cluster = await startCluster({ roles: 'api,delivery' });
    const headers = { 'idempotency-key': 'order-4711' };
    const results = await Promise.all(Array.from({ length: 15 }, (_, i) => cluster.send(i % 3, mail('once@dest.test'), headers)));
    expect(results.map((r) => r.status).filter((s) => s !== 200 && s !== 201)).toStrictEqual([]);
    const ids = new Set(results.map((r) => r.body.id));
    expect(ids.size).toBe(1);
    const [messages] = await cluster.services.db('messages').count({ n: '*' });
    expect(Number(messages!.n)).toBe(1);

    await cluster.sink.waitForMessages(1);
    await until(async () => (await cluster.services.db('recipients').first('status'))?.status === 'delivered', 'the recipient recorded as delivered');
    expect(arrivals(cluster.sink).get('once@dest.test')).toBe(1);
  });
});
