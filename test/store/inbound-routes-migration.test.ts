import { describe, expect, it } from 'vitest';
import { source } from '../../src/store/migrate.ts';
import { messageWith, openStore } from '../helpers/db.ts';
import { STORES } from '../helpers/stores.ts';

const AT = 1_700_000_000_000;
const MIGRATION = '018_inbound_routes';

describe.each(STORES)('inbound routes migration (%s)', (kind) => {
  it('keeps every webhook delivery and its log while event_id becomes nullable, and goes back', async () => {
    const { open } = await openStore(kind);
    const db = open();
    await db.migrate.latest({ migrationSource: source });
    // Later migrations are undone first, newest first, down to and including this one.
    const applied = async () =>
      ((await db.migrate.list({ migrationSource: source })) as [({ name: string } | string)[], unknown[]])[0].map((m) => (typeof m === 'string' ? m : m.name));
    while ((await applied()).includes(MIGRATION)) await db.migrate.down({ migrationSource: source });

    const { workspaceId, messageId } = await messageWith(db, ['delivered']);
    const [ev] = await db('events')
      .insert({ workspace_id: workspaceId, email_id: messageId, recipient_id: null, event: 'email.delivered', occurred_at: AT, payload: '{}' })
      .returning('id');
    const eventId = typeof ev === 'object' ? ev.id : ev;
    const [ep] = await db('webhook_endpoints')
      .insert({
        workspace_id: workspaceId,
        url: 'https://x.example/h',
        events: null,
        secret: 'whsec_x',
        status: 'active',
        failure_count: 0,
        created_at: AT,
        updated_at: AT,
      })
      .returning('id');
    const endpointId = typeof ep === 'object' ? ep.id : ep;
    const [d] = await db('webhook_deliveries')
      .insert({
        event_id: eventId,
        endpoint_id: endpointId,
        workspace_id: workspaceId,
        email_id: messageId,
        event: 'email.delivered',
        status: 'delivered',
        attempts: 1,
        created_at: AT,
        updated_at: AT,
      })
      .returning('id');
    const deliveryId = typeof d === 'object' ? d.id : d;
    await db('webhook_attempts').insert({
      delivery_id: deliveryId,
      endpoint_id: endpointId,
      event: 'email.delivered',
      email_id: messageId,
      attempt: 1,
      duration_ms: 3,
      created_at: AT,
    });

    await db.migrate.latest({ migrationSource: source });
    expect(Number((await db('webhook_attempts').count({ n: '*' }))[0]!.n)).toBe(1);
    expect((await db('webhook_deliveries').first())!.event_id).toBe(eventId);

    const [inbound] = await db('inbound_messages')
      .insert({
        workspace_id: workspaceId,
        received_at: AT,
        mail_from: 'a@b.example',
        recipients: '[]',
        remote_ip: '127.0.0.1',
        helo: null,
        size: 3,
        sha256: 'x',
        parsed: '{}',
        raw: Buffer.from('abc'),
      })
      .returning('id');
    const inboundId = typeof inbound === 'object' ? inbound.id : inbound;
    await db('webhook_deliveries').insert({
      event_id: null,
      inbound_id: inboundId,
      payload: '{}',
      endpoint_id: endpointId,
      workspace_id: workspaceId,
      email_id: inboundId,
      event: 'email.received',
      status: 'pending',
      attempts: 0,
      created_at: AT,
      updated_at: AT,
    });
    // The message goes, and its deliveries with it.
    await db('inbound_messages').where({ id: inboundId }).delete();
    expect(await db('webhook_deliveries').whereNull('event_id')).toEqual([]);
    // A foreign key to events still holds.
    await expect(
      db('webhook_deliveries').insert({
        event_id: 999_999,
        endpoint_id: endpointId,
        workspace_id: workspaceId,
        email_id: 1,
        event: 'x',
        status: 'pending',
        attempts: 0,
        created_at: AT,
        updated_at: AT,
      }),
    ).rejects.toThrow();

    await db.migrate.down({ migrationSource: source });
    expect(Number((await db('webhook_attempts').count({ n: '*' }))[0]!.n)).toBe(1);
  });
});
