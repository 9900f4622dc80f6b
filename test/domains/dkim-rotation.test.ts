import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { source } from '../../src/store/migrate.ts';
import { domainsRepo } from '../../src/store/domains.ts';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { deliveryEnv, FROM_DOMAIN, type DeliveryEnv } from '../delivery/env.ts';
import { dkimpyPython, dkimpyVerdicts, mailauthVerdict, noteWithoutDkimpy } from '../delivery/dkim-check.ts';

interface KeyJson {
  id: number;
  selector: string;
  algorithm: string;
  status: string;
  record: { name: string; value: string };
  retire_after: string | null;
}

const DAY = 86_400_000;

/** The DKIM records the test's DNS publishes, and each delivered message checked against exactly them. */
function world(env: DeliveryEnv, clock: ManualClock) {
  const published = new Map<string, string>();
  const worker = env.worker();
  let delivered = 0;
  env.mx('dest.test');
  return {
    publish(key: { record: { name: string; value: string } }) {
      published.set(key.record.name, key.record.value);
      env.dns.set(key.record.name, 'TXT', key.record.value);
    },
    unpublish(name: string) {
      published.delete(name);
      env.dns.clear(name);
    },
    /** Sends and delivers one message; returns the selectors it was signed with, each signature checked. */
    async step(): Promise<string[]> {
      // Past the delivery's 5 s cache of the sending domain, as time passes between real sends.
      clock.advance(10_000);
      await env.send({ to: `user${delivered}@dest.test` });
      expect(await worker.runOnce()).toMatchObject({ delivered: 1 });
      const message = (await env.sink.waitForMessages(++delivered)).at(-1)!;
      const fields = message.raw.toString('latin1').match(/^DKIM-Signature:.*(?:\r\n[ \t].*)*/gim) ?? [];
      const selectors = fields.map((f) => /\bs=([^;\s]+)/.exec(f.replace(/\r\n[ \t]/g, ''))![1]!);
      // Every signature made verifies against what DNS publishes right now, and there is one at least.
      expect(selectors.length).toBeGreaterThan(0);
      expect(await mailauthVerdict(message.raw, env.dns.address)).toStrictEqual(selectors.map(() => 'pass'));
      if (dkimpyPython) expect(dkimpyVerdicts(message.raw, Object.fromEntries(published))).toStrictEqual(selectors.map(() => 'pass'));
      return selectors;
    },
  };
}

/** Migrations undone newest first until `name` is undone. */
async function downThrough(db: Knex, name: string): Promise<void> {
  for (;;) {
    const [completed] = (await db.migrate.list({ migrationSource: source })) as [({ name: string } | string)[], unknown[]];
    if (!completed.some((m) => (typeof m === 'string' ? m : m.name) === name)) return;
    await db.migrate.down({ migrationSource: source });
  }
}

describe.each(STORES)('DKIM key rotation (%s)', (kind) => {
  it(
    'adds Ed25519 beside RSA, rotates both, and every message at every step carries signatures that verify against the DNS of that moment',
    { timeout: 90_000 },
    async (ctx) => {
      await noteWithoutDkimpy(ctx);
      const clock = new ManualClock();
      const env = await deliveryEnv(kind, { clock });
      const w = world(env, clock);
      const key = env.ws.apiKey;
      const domain = (await env.server.api('GET', '/domains', { key })).body.data[0];
      const keys = async (): Promise<KeyJson[]> => (await env.server.api('GET', `/domains/${domain.id}/keys`, { key })).body.data;
      const verify = async () => {
        const res = await env.server.api('POST', `/domains/${domain.id}/verify`, { key });
        expect(res.status).toBe(200);
        return res.body;
      };

      const [rsaOld] = await keys();
      expect(rsaOld).toMatchObject({ algorithm: 'rsa-sha256', status: 'active' });
      w.publish(rsaOld!);
      expect(await w.step()).toStrictEqual([rsaOld!.selector]);

      // An Ed25519 key: pending, so it does not sign until its record verifies.
      const added = await env.server.api('POST', `/domains/${domain.id}/keys`, { key, body: { algorithm: 'ed25519' } });
      expect(added.status).toBe(201);
      const edOld: KeyJson = added.body;
      expect(edOld).toMatchObject({ algorithm: 'ed25519-sha256', status: 'pending' });
      expect(edOld.record.value).toMatch(/^v=DKIM1; k=ed25519; p=[A-Za-z0-9+/]{43}=$/);
      expect(await w.step()).toStrictEqual([rsaOld!.selector]);

      // Published and verified: both sign (dual signing), RSA first.
      w.publish(edOld);
      expect((await verify()).status).toBe('verified');
      expect((await keys()).map((k) => [k.selector, k.status])).toStrictEqual([
        [rsaOld!.selector, 'active'],
        [edOld.selector, 'active'],
      ]);
      expect(await w.step()).toStrictEqual([rsaOld!.selector, edOld.selector]);

      // Rotation: new selectors, pending; the old keys keep signing, before and after a verify that does not find them yet.
      const rotated = await env.server.api('POST', `/domains/${domain.id}/keys/rotate`, { key, body: { overlap_days: 2 } });
      expect(rotated.status).toBe(201);
      const [rsaNew, edNew] = rotated.body.data as KeyJson[];
      expect(rsaNew).toMatchObject({ algorithm: 'rsa-sha256', status: 'pending' });
      expect(edNew).toMatchObject({ algorithm: 'ed25519-sha256', status: 'pending' });
      expect(rsaNew!.selector).not.toBe(rsaOld!.selector);
      expect(await w.step()).toStrictEqual([rsaOld!.selector, edOld.selector]);
      const early = await verify();
      expect(early.status).toBe('verified');
      expect(
        early.records
          .filter((r: { purpose: string }) => r.purpose === 'dkim')
          .map((r: { selector: string; verified: boolean; required: boolean }) => [r.selector, r.verified, r.required]),
      ).toStrictEqual([
        [rsaOld!.selector, true, true],
        [edOld.selector, true, true],
        [rsaNew!.selector, false, false],
        [edNew!.selector, false, false],
      ]);
      expect(await w.step()).toStrictEqual([rsaOld!.selector, edOld.selector]);

      // The new records published and verified: the new keys sign, the old ones stay published for the overlap.
      w.publish(rsaNew!);
      w.publish(edNew!);
      const verifiedAt = clock.now();
      await verify();
      const overlapping = await keys();
      expect(overlapping.map((k) => [k.selector, k.status, k.retire_after])).toStrictEqual([
        [rsaOld!.selector, 'retiring', new Date(verifiedAt + 2 * DAY).toISOString()],
        [edOld.selector, 'retiring', new Date(verifiedAt + 2 * DAY).toISOString()],
        [rsaNew!.selector, 'active', null],
        [edNew!.selector, 'active', null],
      ]);
      expect(await w.step()).toStrictEqual([rsaNew!.selector, edNew!.selector]);
      const during = (await env.server.api('GET', `/domains/${domain.id}`, { key })).body;
      expect(during.records.filter((r: { purpose: string }) => r.purpose === 'dkim')).toHaveLength(4);

      // After the overlap the old keys are retired and leave the domain's records; removing them from DNS changes nothing.
      clock.set(verifiedAt + 2 * DAY);
      expect((await keys()).map((k) => k.status)).toStrictEqual(['retired', 'retired', 'active', 'active']);
      const after = (await env.server.api('GET', `/domains/${domain.id}`, { key })).body;
      expect(after.records.filter((r: { purpose: string }) => r.purpose === 'dkim').map((r: { selector: string }) => r.selector)).toStrictEqual([
        rsaNew!.selector,
        edNew!.selector,
      ]);
      expect(after.selector).toBe(rsaNew!.selector);
      w.unpublish(rsaOld!.record.name);
      w.unpublish(edOld.record.name);
      expect(await w.step()).toStrictEqual([rsaNew!.selector, edNew!.selector]);
    },
  );

  it('refuses what would break the rules: a second key of an algorithm, rotating a pending key, a second rotation, domain-scoped keys', async () => {
    const env = await deliveryEnv(kind);
    const key = env.ws.apiKey;
    const domain = (await env.server.api('GET', '/domains', { key })).body.data[0];
    const twice = await env.server.api('POST', `/domains/${domain.id}/keys`, { key, body: { algorithm: 'rsa' } });
    expect(twice.status).toBe(409);
    expect(twice.body.error).toMatch(/already has a rsa-sha256 key \(selector mailsvc\d{6}, active\)/);
    const bad = await env.server.api('POST', `/domains/${domain.id}/keys`, { key, body: { algorithm: 'dsa' } });
    expect(bad.status).toBe(422);
    expect((await env.server.api('POST', `/domains/${domain.id}/keys`, { key, body: { algorithm: 'ed25519' } })).status).toBe(201);
    const pending = await env.server.api('POST', `/domains/${domain.id}/keys/rotate`, { key, body: { algorithm: 'ed25519' } });
    expect(pending.status).toBe(409);
    expect(pending.body.error).toMatch(/still pending/);
    const overlap = await env.server.api('POST', `/domains/${domain.id}/keys/rotate`, { key, body: { overlap_days: 400 } });
    expect(overlap.status).toBe(422);
    // No body at all: every active key is rotated.
    expect((await env.server.api('POST', `/domains/${domain.id}/keys/rotate`, { key })).status).toBe(201);
    const again = await env.server.api('POST', `/domains/${domain.id}/keys/rotate`, { key, body: { algorithm: 'rsa' } });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/being rotated already/);

    const scoped = await env.server.services.tenancy.createKey(env.ws.id, { domain: FROM_DOMAIN });
    const forbidden = await env.server.api('POST', `/domains/${domain.id}/keys/rotate`, { key: scoped.secret, body: {} });
    expect(forbidden.status).toBe(403);
    expect((await env.server.api('POST', `/domains/${domain.id}/keys`, { key: scoped.secret, body: { algorithm: 'ed25519' } })).status).toBe(403);
    const listed = await env.server.api('GET', `/domains/${domain.id}/keys`, { key: scoped.secret });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((k: KeyJson) => k.status)).toStrictEqual(['active', 'pending', 'pending']);
  });

  it('migration 021 gives an existing domain its key as a one-key list: active when verified, and it keeps signing without re-verification', async () => {
    const clock = new ManualClock();
    const env = await deliveryEnv(kind, { clock });
    const w = world(env, clock);
    const db = env.server.services.db;
    await env.server.services.domains.add(env.ws.id, 'pending.test');
    const before = (await domainsRepo.byName(db, FROM_DOMAIN))!;

    // Back to the schema of one key per domain, then forward again.
    await downThrough(db, '021_dkim_keys');
    expect(await db.schema.hasTable('dkim_keys')).toBe(false);
    await db.migrate.latest({ migrationSource: source });
    const rows = await db('dkim_keys').orderBy('id');
    expect(rows.map((r) => [r.selector, r.algorithm, r.status, r.public_key === before.dkim_public_key])).toStrictEqual([
      [before.selector, 'rsa-sha256', 'active', true],
      [expect.stringMatching(/^mailsvc\d{6}$/), 'rsa-sha256', 'pending', false],
    ]);
    w.publish({ record: { name: `${before.selector}._domainkey.${FROM_DOMAIN}`, value: `v=DKIM1; k=rsa; p=${before.dkim_public_key}` } });
    expect(await w.step()).toStrictEqual([before.selector]);
    expect((await domainsRepo.byName(db, FROM_DOMAIN))!.verified_by).toBe('override');
  });
});
