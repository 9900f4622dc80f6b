import { describe, expect, it } from 'vitest';
import { recordEvent, type EventName } from '../../src/events/record.ts';
import { ManualClock } from '../helpers/clock.ts';
import { messageWith } from '../helpers/db.ts';
import { startTestServer } from '../helpers/server.ts';
import { STORES } from '../helpers/stores.ts';

const HOUR = 3_600_000;

describe.each(STORES)('GET /stats/daily and /stats/queue (%s)', (kind) => {
  it('counts sent recipients and outcomes per UTC day and stream, bounces by type, and the queue', async () => {
    const clock = new ManualClock('2026-11-21T10:00:00.000Z');
    const server = await startTestServer(kind, { clock });
    const { db } = server.services;
    // Yesterday evening: three recipients, one still deferred, one queued, one delivered.
    const yesterday = Date.parse('2026-11-20T21:00:00.000Z');
    const { workspaceId, messageId } = await messageWith(db, ['deferred', 'queued', 'delivered'], yesterday);
    await messageWith(db, ['suppressed'], yesterday);
    const key = await server.services.tenancy.createKey(workspaceId, {});
    const emit = (event: EventName, at: number, bounceType?: 'permanent' | 'transient' | 'blocked') =>
      db.transaction((tx) =>
        recordEvent(tx, {
          workspaceId,
          emailId: messageId,
          recipientId: null,
          event,
          recipient: 'r0@example.org',
          at,
          provider: { response: 'x', reporting_mta: 'mx' },
          ...(bounceType ? { bounceType } : {}),
        }),
      );
    await emit('email.delivered', yesterday + HOUR);
    await emit('email.bounced', clock.now() - HOUR, 'permanent');
    await emit('email.bounced', clock.now() - HOUR, 'blocked');
    await emit('email.opened', clock.now() - HOUR);
    await emit('email.clicked', clock.now() - HOUR);

    const res = await server.api('GET', '/stats/daily?days=3', { key: key.secret });
    expect(res.status).toBe(200);
    expect(res.body.from).toBe('2026-11-19');
    expect(res.body.to).toBe('2026-11-21');
    expect(res.body.data).toHaveLength(6);
    const row = (day: string, stream = 'transactional') => res.body.data.find((r: { day: string; stream: string }) => r.day === day && r.stream === stream);
    expect(row('2026-11-20')).toMatchObject({ sent: 3, delivered: 1, bounced: { permanent: 0, transient: 0, blocked: 0 }, opened: 0 });
    expect(row('2026-11-21')).toMatchObject({ sent: 0, delivered: 0, bounced: { permanent: 1, transient: 0, blocked: 1 }, opened: 1, clicked: 1, complained: 0 });
    expect(row('2026-11-21', 'broadcast')).toMatchObject({ sent: 0, delivered: 0, opened: 0 });

    const queue = await server.api('GET', '/stats/queue', { key: key.secret });
    expect(queue.body).toMatchObject({
      deferred: 1,
      queued: 1,
      scheduled: 0,
      sending: 0,
      oldest_deferred_since: '2026-11-20T21:00:00.000Z',
      oldest_deferred_age_seconds: 13 * 3600,
      next_retry_at: '2026-11-20T21:00:00.000Z',
    });

    expect((await server.api('GET', '/stats/daily?days=91', { key: key.secret })).status).toBe(422);
    // Another workspace and a domain key of another domain see none of it.
    const other = await server.workspace();
    expect((await server.api('GET', '/stats/queue', { key: other.apiKey })).body.deferred).toBe(0);
    await server.verifiedDomain(workspaceId, 'other.test');
    const scoped = await server.services.tenancy.createKey(workspaceId, { domain: 'other.test' });
    const scopedDaily = await server.api('GET', '/stats/daily?days=3', { key: scoped.secret });
    expect(scopedDaily.body.data.every((r: { sent: number; delivered: number }) => r.sent === 0 && r.delivered === 0)).toBe(true);
  });
});
