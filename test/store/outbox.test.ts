import { describe, expect, it } from 'vitest';
import { recordEvent, type NewEvent } from '../../src/events/record.ts';
import { pruneRetained } from '../../src/retention/messages.ts';
import type { Db } from '../../src/store/db.ts';
import { eventsRepo } from '../../src/store/events.ts';
import { webhooksRepo } from '../../src/store/webhooks.ts';
import { workspaces } from '../../src/store/workspaces.ts';
import { messageWith, migratedStore } from '../helpers/db.ts';
import { STORES } from '../helpers/stores.ts';

const at = 1_700_000_000_000;
const DAY = 86_400_000;

async function endpoint(db: Db, workspaceId: number, name: string, events: string[] | null, status: 'active' | 'paused' | 'disabled' = 'active') {
  return webhooksRepo.insertEndpoint(db, {
    workspace_id: workspaceId,
    url: `https://hooks.example.org/${name}`,
    events: events === null ? null : JSON.stringify(events),
    secret: `whsec_${name}`,
    status,
    failure_count: 0,
    last_success_at: null,
    created_at: at,
    updated_at: at,
  });
}

async function deliveries(db: Db, eventId: number) {
  return (await webhooksRepo.deliveriesOf(db, eventId)).map((d) => [d.endpoint_id, d.event, d.status]);
}

describe.each(STORES)('webhook outbox (%s)', (kind) => {
  it('records a delivery per subscribed endpoint with the event, in its transaction, and retention keeps events until they are finished', async () => {
    const { db } = await migratedStore(kind);
    const { messageId, workspaceId, recipientIds } = await messageWith(db, ['sending', 'sending']);
    const other = await workspaces.insert(db, { name: 'other', plan: 'free', rate_per_minute: 1, rate_per_hour: 1, created_at: at });
    const all = await endpoint(db, workspaceId, 'all', null);
    const bounces = await endpoint(db, workspaceId, 'bounces', ['email.bounced']);
    const off = await endpoint(db, workspaceId, 'off', null, 'disabled');
    const paused = await endpoint(db, workspaceId, 'paused', ['email.delivered'], 'paused');
    await endpoint(db, other.id, 'elsewhere', null);

    const event = (name: NewEvent['event'], i: number): NewEvent => ({
      workspaceId,
      emailId: messageId,
      recipientId: recipientIds[i],
      event: name,
      recipient: `r${i}@example.org`,
      ...(name === 'email.bounced' ? { bounceType: 'permanent' as const } : {}),
      provider: { response: 'r', reporting_mta: 'mx.example.org' },
      at,
    });
    // An event whose transaction rolls back leaves neither itself nor deliveries behind.
    await db
      .transaction(async (tx) => {
        await recordEvent(tx, event('email.delivered', 0));
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(await eventsRepo.payloadsOf(db, messageId)).toStrictEqual([]);

    await db.transaction((tx) => recordEvent(tx, event('email.delivered', 0)));
    await db.transaction((tx) => recordEvent(tx, event('email.bounced', 1)));
    const [deliveredId, bouncedId] = (await db('events').orderBy('id').select('id')).map((r: { id: number }) => r.id);
    expect(await deliveries(db, deliveredId)).toStrictEqual([
      [all, 'email.delivered', 'pending'],
      [off, 'email.delivered', 'skipped'],
      [paused, 'email.delivered', 'pending'],
    ]);
    expect(await deliveries(db, bouncedId)).toStrictEqual([
      [all, 'email.bounced', 'pending'],
      [bounces, 'email.bounced', 'pending'],
      [off, 'email.bounced', 'skipped'],
    ]);

    // Past retention, an event with a pending delivery stays; one whose deliveries are all
    // finished goes, with them.
    const later = at + 31 * DAY;
    expect((await pruneRetained(db, later, 30)).events).toBe(0);
    for (const d of await webhooksRepo.deliveriesOf(db, deliveredId))
      await webhooksRepo.setDeliveryStatus(db, d.id, d.endpoint_id === all ? 'delivered' : 'failed', later);
    const bouncedDeliveries = await webhooksRepo.deliveriesOf(db, bouncedId);
    await webhooksRepo.setDeliveryStatus(db, bouncedDeliveries[0].id, 'delivered', later);
    expect((await pruneRetained(db, later, 30)).events).toBe(1);
    expect((await eventsRepo.payloadsOf(db, messageId)).map((p) => JSON.parse(p).event)).toStrictEqual(['email.bounced']);
    expect(await deliveries(db, deliveredId)).toStrictEqual([]);

    await webhooksRepo.setDeliveryStatus(db, bouncedDeliveries[1].id, 'delivered', later);
    expect((await pruneRetained(db, later, 30)).events).toBe(1);
    expect(await eventsRepo.payloadsOf(db, messageId)).toStrictEqual([]);
    expect(await deliveries(db, bouncedId)).toStrictEqual([]);
  });
});
