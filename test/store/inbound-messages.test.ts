import { describe, expect, it } from 'vitest';
import { pruneRetained } from '../../src/retention/messages.ts';
import { inboundMessagesRepo } from '../../src/store/inboundMessages.ts';
import { webhooksRepo } from '../../src/store/webhooks.ts';
import { workspaces } from '../../src/store/workspaces.ts';
import { migratedStore } from '../helpers/db.ts';
import { STORES } from '../helpers/stores.ts';

const DAY = 86_400_000;
const NOW = 1_800_000_000_000;

describe.each(STORES)('received messages in the store (%s)', (kind) => {
  it('queues one delivery per route, born skipped for a disabled route; retention prunes a finished message with its deliveries and keeps one still pending', async () => {
    const { db } = await migratedStore(kind);
    const ws = (await workspaces.insert(db, { name: 'w', plan: 'free', rate_per_minute: 10, rate_per_hour: 100, created_at: NOW })).id;
    const route = async (status: 'active' | 'disabled') =>
      webhooksRepo.insertEndpoint(db, {
        workspace_id: ws,
        url: 'https://app.example/in',
        events: '["email.received"]',
        secret: 'whsec_x',
        status,
        failure_count: 0,
        last_success_at: null,
        route_match: '*@acme.test',
        route_priority: 0,
        created_at: NOW,
        updated_at: NOW,
      });
    const [live, off] = [await route('active'), await route('disabled')];
    const store = (at: number) =>
      db.transaction(async (tx) => {
        const id = await inboundMessagesRepo.insert(tx, {
          workspace_id: ws,
          received_at: at,
          mail_from: 'a@plain.test',
          recipients: '["in@acme.test"]',
          remote_ip: '127.0.0.1',
          helo: null,
          size: 3,
          sha256: 'x',
          parsed: '{}',
          raw: Buffer.from('abc'),
        });
        const queued = await inboundMessagesRepo.queueDeliveries(
          tx,
          { id, workspace_id: ws },
          [
            { routeId: live, payload: '{"a":1}' },
            { routeId: off, payload: '{"a":2}' },
            { routeId: 999_999, payload: '{}' },
          ],
          at,
        );
        return { id, queued };
      });
    const old = await store(NOW - 40 * DAY);
    expect(old.queued).toBe(2);
    const rows = await db('webhook_deliveries').where({ inbound_id: old.id }).orderBy('endpoint_id');
    expect(rows.map((r) => [r.endpoint_id, r.status, r.payload, r.event_id])).toStrictEqual([
      [live, 'pending', '{"a":1}', null],
      [off, 'skipped', '{"a":2}', null],
    ]);
    expect((await webhooksRepo.attemptsOf(db, off, { limit: 5 })).map((a) => a.error)).toStrictEqual(['skipped: the endpoint is disabled']);
    expect((await inboundMessagesRepo.rawBytes(db, old.id))!.toString()).toBe('abc');

    // Pending: kept past retention, until its receiver has it.
    expect((await pruneRetained(db, NOW, 30)).inboundMessages).toBe(0);
    await db('webhook_deliveries').where({ inbound_id: old.id }).update({ status: 'delivered' });
    const recent = await store(NOW - DAY);
    expect((await pruneRetained(db, NOW, 30)).inboundMessages).toBe(1);
    expect(await inboundMessagesRepo.summary(db, old.id)).toBeUndefined();
    expect(await db('webhook_deliveries').where({ inbound_id: old.id })).toStrictEqual([]);
    expect(await inboundMessagesRepo.summary(db, recent.id)).toMatchObject({ id: recent.id });
  });
});
