import { describe, expect, it } from 'vitest';
import { until } from '../webhooks/world.ts';
import { arrivals, CLUSTER_PG, startCluster } from '../helpers/cluster.ts';

const MESSAGES = 600;

describe.skipIf(!CLUSTER_PG)('a serve process killed mid-delivery', () => {
  it(
    'SIGKILL of one of three: the others take over its leases, every message arrives, the duplicates are exactly its in-flight rows whose DATA the sink had taken',
    { timeout: 180_000 },
    async () => {
      // A short lease, so the survivors take the dead process's rows back within seconds.
      const cluster = await startCluster({ settings: { delivery: { leaseSeconds: 3 } } });
      const { sink, services, nodes } = cluster;
      const addresses = Array.from({ length: MESSAGES }, (_, i) => `user${i}@dest.test`);
      // The first 150 go through at once; the rest wait at DATA for the gate, so at the kill the
      // victim holds rows in every stage: leased and waiting for a connection, and mid-transaction.
      let openGate!: () => void;
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      for (const a of addresses.slice(150)) sink.script(a, [{ data: { until: gate } }]);

      for (let i = 0; i < MESSAGES; i += 60) {
        await Promise.all(
          addresses.slice(i, i + 60).map(async (to, j) => {
            const res = await cluster.send((i + j) % 3, { from: 'news@acme.test', to, subject: `for ${to}`, text: 'hello' });
            expect(res.status).toBe(201);
          }),
        );
      }

      const victim = nodes[1]!;
      const pid = victim.child.pid!;
      const leasedBy = async (): Promise<string[]> => services.db('recipients').where({ status: 'sending' }).andWhereLike('lease_owner', `%:${pid}:%`).pluck('address');
      await until(async () => (await leasedBy()).length >= 20, 'the victim holding 20 leases', 30_000);
      await sink.waitFor(() => cluster.deliveredBy()[1]! > 0, 'a delivery by the victim before the kill');
      await victim.kill();
      // Its sessions end, as PostgreSQL ends them once it notices the connections are gone (a
      // session waiting for a lock only notices when it gets it): a commit it had sent by then
      // has landed, anything else is rolled back.
      await until(
        async () => {
          const { rows } = await services.db.raw('select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = ?', [victim.appName]);
          return rows[0].n === 0;
        },
        "the victim's database sessions to end",
        30_000,
      );
      const inFlight = await leasedBy();
      expect(inFlight.length).toBeGreaterThanOrEqual(20);
      openGate();

      await sink.waitFor(() => arrivals(sink).size === MESSAGES, 'every recipient at the sink');
      await until(
        async () => {
          const [row] = await services.db('recipients').whereNot({ status: 'delivered' }).count({ n: '*' });
          return Number(row!.n) === 0;
        },
        'every recipient recorded as delivered',
        30_000,
      );

      const seen = arrivals(sink);
      // A copy whose DATA the victim had sent before it died reached the sink; nothing else of
      // the victim's can have arrived after the kill.
      const victimCopies = new Set(sink.messages.filter((m) => m.helo === victim.helo).flatMap((m) => m.to));
      const expectedDuplicates = inFlight.filter((a) => victimCopies.has(a)).sort();
      expect(expectedDuplicates.length).toBeGreaterThan(0);
      const duplicates = [...seen]
        .filter(([, n]) => n > 1)
        .map(([a]) => a)
        .sort();
      expect(Math.max(...seen.values())).toBeLessThanOrEqual(2);
      expect(duplicates).toStrictEqual(expectedDuplicates);
      // The survivors delivered what the victim held.
      const survivors = new Set(sink.messages.filter((m) => m.helo !== victim.helo).flatMap((m) => m.to));
      expect(inFlight.every((a) => survivors.has(a))).toBe(true);

      const events = (await services.db('events').where({ event: 'email.delivered' }).groupBy('email_id').select('email_id').count({ n: '*' })) as unknown as {
        n: string | number;
      }[];
      expect(events).toHaveLength(MESSAGES);
      expect(events.every((e) => Number(e.n) === 1)).toBe(true);
    },
  );
});
