import { describe, expect, it } from 'vitest';
import { startReceiver } from '../webhooks/receiver.ts';
import { until } from '../webhooks/world.ts';
import { arrivals, CLUSTER_PG, startCluster } from '../helpers/cluster.ts';

const MESSAGES = 3000;

describe.skipIf(!CLUSTER_PG)('three serve processes on one PostgreSQL', () => {
  it('3,000 messages sent round-robin are each delivered once, with one email.delivered event and one webhook POST each', { timeout: 240_000 }, async () => {
    const cluster = await startCluster();
    const receiver = await startReceiver();
    await cluster.services.webhooks.create(cluster.workspaceId, { url: receiver.url, events: ['email.delivered'] });

    const addresses = Array.from({ length: MESSAGES }, (_, i) => `user${i}@dest.test`);
    const ids = new Map<number, string>();
    // 60 requests in flight at a time, spread over the three processes in turn.
    for (let i = 0; i < MESSAGES; i += 60) {
      await Promise.all(
        addresses.slice(i, i + 60).map(async (to, j) => {
          const res = await cluster.send((i + j) % 3, { from: 'news@acme.test', to, subject: `for ${to}`, text: 'hello' });
          expect(res.status).toBe(201);
          ids.set(res.body.id, to);
        }),
      );
    }
    expect(ids.size).toBe(MESSAGES);

    await cluster.sink.waitFor(() => arrivals(cluster.sink).size === MESSAGES, 'every recipient at the sink');
    const posts = await receiver.waitFor(MESSAGES, 60_000);

    const seen = arrivals(cluster.sink);
    expect([...seen.keys()].sort()).toStrictEqual([...addresses].sort());
    expect(Math.max(...seen.values())).toBe(1);
    // Every process took a share of the work.
    expect(cluster.deliveredBy().every((n) => n > 0)).toBe(true);

    const events = (await cluster.services.db('events').where({ event: 'email.delivered' }).groupBy('email_id').select('email_id').count({ n: '*' })) as unknown as {
      email_id: number;
      n: string | number;
    }[];
    expect(events).toHaveLength(MESSAGES);
    expect(events.every((e) => Number(e.n) === 1 && ids.has(Number(e.email_id)))).toBe(true);

    const told = new Map<number, number>();
    for (const p of posts) {
      const payload = JSON.parse(p.raw.toString());
      expect(payload.event).toBe('email.delivered');
      expect(payload.recipient).toBe(ids.get(payload.email_id));
      told.set(payload.email_id, (told.get(payload.email_id) ?? 0) + 1);
    }
    expect(told.size).toBe(MESSAGES);
    expect(Math.max(...told.values())).toBe(1);
    // Nothing more trickles in once everything is marked delivered on the endpoint.
    await until(
      async () => {
        const [row] = await cluster.services.db('webhook_deliveries').whereNot({ status: 'delivered' }).count({ n: '*' });
        return Number(row!.n) === 0;
      },
      'every webhook delivery marked delivered',
      30_000,
    );
    expect(receiver.requests).toHaveLength(MESSAGES);
  });
});
