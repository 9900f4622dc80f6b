import { describe, expect, it, onTestFinished } from 'vitest';
import type { Logger } from '../../src/core/ports.ts';
import { DeliveryWorker } from '../../src/delivery/worker.ts';
import { ManualClock } from '../helpers/clock.ts';
import { certificateFor, pemFile, startPolicyServer, type PolicyServer } from '../helpers/policy-server.ts';
import { startSmtpSink, testCertificate } from '../helpers/smtp-sink.ts';
import type { StoreKind } from '../helpers/stores.ts';
import { deliveryEnv, loopbackAlias, type DeliveryEnv } from './env.ts';

/** One certificate for every policy host and MX host the tests trust, its own trust anchor. */
const trusted = certificateFor(['mx.sts.test', ...['sts', 'slow', 'big', 'moved', 'testing'].map((d) => `mta-sts.${d}.test`)]);

const enforce = (mx: string[], maxAge = 86_400) => `version: STSv1\r\nmode: enforce\r\n${mx.map((m) => `mx: ${m}\r\n`).join('')}max_age: ${maxAge}\r\n`;

interface World {
  env: DeliveryEnv;
  policy: PolicyServer;
  /** Publishes `_mta-sts.<domain>` with this id and points `mta-sts.<domain>` at the policy server. */
  publish(domain: string, id: string): void;
  /** A worker whose log lines are kept. */
  worker(): { worker: DeliveryWorker; lines: string[] };
}

async function world(kind: StoreKind, opts: { sinkTls?: { key: string; cert: string }; clock?: ManualClock; fetchTimeout?: number } = {}): Promise<World> {
  const cert = await trusted;
  const policy = await startPolicyServer(cert);
  const env = await deliveryEnv(kind, {
    clock: opts.clock,
    sink: { tls: opts.sinkTls ?? cert },
    delivery: { mtaSts: { port: policy.port, fetchTimeout: opts.fetchTimeout ?? 1 } },
    config: { tls: { trustedCAs: pemFile(cert.cert) } },
  });
  return {
    env,
    policy,
    publish(domain, id) {
      env.dns.set(`_mta-sts.${domain}`, 'TXT', `v=STSv1; id=${id}`);
      env.dns.set(`mta-sts.${domain}`, 'A', '127.0.0.1');
    },
    worker() {
      const lines: string[] = [];
      const keep = (o: object | string, m?: string): void => void lines.push(m ?? (typeof o === 'string' ? o : JSON.stringify(o)));
      const log: Logger = { debug: () => {}, info: keep, warn: keep, error: keep, child: () => log };
      const worker = new DeliveryWorker({ ...env.server.services, log }, { stopGraceMs: 2000, pollMs: 20 });
      onTestFinished(() => worker.stop());
      return { worker, lines };
    },
  };
}

type Recipient = { status: string; last_response: string | null; tls: string | null };
const recipient = async (env: DeliveryEnv, id: number): Promise<Recipient> => ((await env.detail(id)) as { recipients: Recipient[] }).recipients[0]!;

// The rules are the same on every database; storing templates and a recipient's `tls` is
// tested on both (test/templates/api.test.ts, test/store/recipient-tls-migration.test.ts).
describe.each(['sqlite'] as const)('MTA-STS outbound (%s)', (kind) => {
  it('enforce: mail goes only to an MX host the policy names, over TLS verified for it, and the recipient says mta-sts', async () => {
    const { env, policy, publish, worker } = await world(kind);
    // The preferred MX is not named by the policy: nothing may reach it.
    const evil = await startSmtpSink({ tls: await testCertificate() });
    onTestFinished(() => evil.close());
    await loopbackAlias('127.0.0.2', env.port, evil);
    env.mx('sts.test', [
      { name: 'mx.evil.test', ip: '127.0.0.2', priority: 5 },
      { name: 'mx.sts.test', ip: '127.0.0.1', priority: 10 },
    ]);
    publish('sts.test', 'a1');
    policy.answer('sts.test', { policy: enforce(['*.sts.test']) });

    const id = await env.send({ to: 'ann@sts.test' });
    expect(await worker().worker.runOnce()).toMatchObject({ delivered: 1 });

    const [message] = await env.sink.waitForMessages(1);
    expect(message!.secure).toBe(true);
    expect(evil.connections).toHaveLength(0);
    expect(policy.requests).toStrictEqual([{ host: 'mta-sts.sts.test', path: '/.well-known/mta-sts.txt' }]);
    expect(await recipient(env, id)).toMatchObject({ status: 'delivered', tls: 'mta-sts' });
  });

  it('enforce: an MX host the policy does not name is never contacted; the recipient is deferred with a reply naming MTA-STS', async () => {
    const { env, policy, publish, worker } = await world(kind);
    env.mx('sts.test', [{ name: 'mx.evil.test', ip: '127.0.0.1' }]);
    publish('sts.test', 'a1');
    policy.answer('sts.test', { policy: enforce(['mx.sts.test', '*.backup.sts.test']) });

    const id = await env.send({ to: 'ann@sts.test' });
    expect(await worker().worker.runOnce()).toMatchObject({ deferred: 1 });

    expect(env.sink.connections).toHaveLength(0);
    const r = await recipient(env, id);
    expect(r.status).toBe('deferred');
    expect(r.last_response).toBe('MTA-STS policy of sts.test (enforce): mx.evil.test is not named by the policy (mx: mx.sts.test, *.backup.sts.test)');
  });

  it('enforce: an MX whose certificate is not valid for its name gets nothing; the recipient is deferred naming MTA-STS and the TLS failure', async () => {
    // The sink presents a certificate for localhost, from no trusted issuer.
    const { env, policy, publish, worker } = await world(kind, { sinkTls: await testCertificate() });
    env.mx('sts.test', [{ name: 'mx.sts.test', ip: '127.0.0.1' }]);
    publish('sts.test', 'a1');
    policy.answer('sts.test', { policy: enforce(['mx.sts.test']) });

    const id = await env.send({ to: 'ann@sts.test' });
    expect(await worker().worker.runOnce()).toMatchObject({ deferred: 1 });

    expect(env.sink.messages).toHaveLength(0);
    const r = await recipient(env, id);
    expect(r.status).toBe('deferred');
    expect(r.last_response).toMatch(/^MTA-STS policy of sts\.test \(enforce\): TLS with mx\.sts\.test failed: .+/);
  });

  it('testing: mail is delivered as without a policy, and what enforcing would refuse is logged', async () => {
    const { env, policy, publish, worker } = await world(kind, { sinkTls: await testCertificate() });
    env.mx('testing.test', [{ name: 'mx.testing.test', ip: '127.0.0.1' }]);
    publish('testing.test', 't1');
    policy.answer('testing.test', { policy: 'version: STSv1\nmode: testing\nmx: mx.elsewhere.test\nmax_age: 86400\n' });

    const id = await env.send({ to: 'ann@testing.test' });
    const { worker: w, lines } = worker();
    expect(await w.runOnce()).toMatchObject({ delivered: 1 });

    await env.sink.waitForMessages(1);
    expect(await recipient(env, id)).toMatchObject({ status: 'delivered', tls: 'opportunistic' });
    expect(lines).toContain('MTA-STS policy of testing.test (testing): mx.testing.test is not named by the policy; delivering anyway');
    expect(lines.some((l) => l.startsWith('MTA-STS policy of testing.test (testing): mx.testing.test would be refused when enforced: '))).toBe(true);
  });

  it('a policy host that never answers holds up only its own domain, which then goes without a policy', async () => {
    const { env, policy, publish, worker } = await world(kind, { fetchTimeout: 4 });
    env.mx('slow.test', [{ name: 'mx.slow.test', ip: '127.0.0.1' }]);
    env.mx('fast.test', [{ name: 'mx.fast.test', ip: '127.0.0.1' }]);
    publish('slow.test', 's1');
    policy.answer('slow.test', { hang: true });

    const slow = await env.send({ to: 'ann@slow.test' });
    const fast = await env.send({ to: 'bob@fast.test' });
    const { worker: w } = worker();
    w.start();

    const [first] = await env.sink.waitForMessages(1);
    expect(first!.to).toStrictEqual(['bob@fast.test']);
    // slow.test's fetch had begun, and was still hanging, when fast.test's mail was delivered.
    const fetchEnded = await policy.firstClose;
    expect(policy.arrivals[0]).toBeLessThan(first!.at);
    expect(first!.at).toBeLessThan(fetchEnded);

    const both = await env.sink.waitForMessages(2);
    expect(both[1]!.to).toStrictEqual(['ann@slow.test']);
    expect(both[1]!.at).toBeGreaterThanOrEqual(fetchEnded);
    await w.stop();
    expect(await recipient(env, fast)).toMatchObject({ status: 'delivered' });
    expect(await recipient(env, slow)).toMatchObject({ status: 'delivered', tls: 'opportunistic' });
  });

  it('a policy host that sends 100 MB is cut off at 64 KB and its domain goes without a policy', async () => {
    const { env, policy, publish, worker } = await world(kind);
    env.mx('big.test', [{ name: 'mx.big.test', ip: '127.0.0.1' }]);
    publish('big.test', 'b1');
    policy.answer('big.test', { flood: true });

    const id = await env.send({ to: 'ann@big.test' });
    expect(await worker().worker.runOnce()).toMatchObject({ delivered: 1 });
    await policy.firstClose;
    expect(policy.floodBytes()).toBeLessThan(10 * 1024 * 1024);
    expect(await recipient(env, id)).toMatchObject({ status: 'delivered', tls: 'opportunistic' });
  });

  it('a redirect is not followed: the domain goes without a policy', async () => {
    const { env, policy, publish, worker } = await world(kind);
    env.mx('moved.test', [{ name: 'mx.moved.test', ip: '127.0.0.1' }]);
    publish('moved.test', 'm1');
    publish('sts.test', 'a1');
    // Followed, the redirect would give an enforce policy that does not name mx.moved.test.
    policy.answer('moved.test', { status: 301, headers: { location: `https://mta-sts.sts.test:${policy.port}/.well-known/mta-sts.txt` } });
    policy.answer('sts.test', { policy: enforce(['mx.sts.test']) });

    const id = await env.send({ to: 'ann@moved.test' });
    const { worker: w, lines } = worker();
    expect(await w.runOnce()).toMatchObject({ delivered: 1 });
    expect(policy.requests).toStrictEqual([{ host: 'mta-sts.moved.test', path: '/.well-known/mta-sts.txt' }]);
    expect(lines.some((l) => l.includes('answered 301 (a redirect, which RFC 8461 §3.3 refuses)'))).toBe(true);
    expect(await recipient(env, id)).toMatchObject({ status: 'delivered' });
  });

  it('a policy is fetched once and kept for max_age; a new TXT id fetches it again; a failed fetch keeps the cached one', async () => {
    const clock = new ManualClock();
    const { env, policy, publish, worker } = await world(kind, { clock });
    env.mx('sts.test', [{ name: 'mx.sts.test', ip: '127.0.0.1' }]);
    publish('sts.test', 'a1');
    policy.answer('sts.test', { policy: enforce(['mx.sts.test'], 600) });
    const { worker: w } = worker();

    for (let i = 0; i < 3; i++) await env.send({ to: `r${i}@sts.test` });
    expect(await w.runOnce()).toMatchObject({ delivered: 3 });
    clock.advance(120_000);
    await env.send({ to: 'later@sts.test' });
    expect(await w.runOnce()).toMatchObject({ delivered: 1 });
    expect(policy.requests).toHaveLength(1);

    // A new id: the policy is fetched again, and the new one (naming another MX) applies.
    publish('sts.test', 'a2');
    policy.answer('sts.test', { policy: enforce(['mx.other.test'], 600) });
    clock.advance(120_000);
    const refused = await env.send({ to: 'refused@sts.test' });
    expect(await w.runOnce()).toMatchObject({ deferred: 1 });
    expect(policy.requests).toHaveLength(2);
    expect((await recipient(env, refused)).last_response).toMatch(/^MTA-STS policy of sts\.test \(enforce\): mx\.sts\.test is not named/);

    // Another id, but the fetch fails: the cached policy (a2) stays in force.
    publish('sts.test', 'a3');
    policy.answer('sts.test', { status: 500 });
    clock.advance(120_000);
    const stillRefused = await env.send({ to: 'still@sts.test' });
    expect(await w.runOnce()).toMatchObject({ deferred: 2 });
    expect(policy.requests).toHaveLength(3);
    expect((await recipient(env, stillRefused)).last_response).toMatch(/^MTA-STS policy of sts\.test \(enforce\)/);

    // Past max_age (600 s after the a2 fetch) the policy is gone, and with the fetch still
    // failing the domain goes without one.
    clock.advance(500_000);
    const after = await env.send({ to: 'after@sts.test' });
    await w.runOnce();
    expect(await recipient(env, after)).toMatchObject({ status: 'delivered', tls: 'opportunistic' });
  });
});
