import { describe, expect, it } from 'vitest';
import { recordVerdicts, type Attempt, type RecordDeps, type Verdict } from '../../src/delivery/outcome.ts';
import type { Db } from '../../src/store/db.ts';
import type { RecipientRow } from '../../src/store/messages.ts';
import { queueRepo } from '../../src/store/queue.ts';
import { webhooksRepo } from '../../src/store/webhooks.ts';
import { messageWith, migratedStore } from '../helpers/db.ts';
import { STORES } from '../helpers/stores.ts';

const at = 1_700_000_000_000;
const now = at + 5_000;

const deps = (owner: string): RecordDeps => ({
  owner,
  now,
  random: () => 0.5,
  policy: { scheduleSeconds: [60], maxAgeSeconds: 3600 },
  hostname: 'mail.us.test',
});

const delivered: Verdict = { kind: 'delivered', host: 'mx.example.org', code: 250, response: '250 2.0.0 Ok: queued' };
const gone: Verdict = {
  kind: 'bounced',
  host: 'mx.example.org',
  code: 550,
  response: '550 5.1.1 No such user',
  bounceType: 'permanent',
  reason: 'unknown user',
  status: '5.1.1',
};
const later: Verdict = { kind: 'deferred', host: 'mx.example.org', code: 451, response: '451 4.3.0 Try again' };

async function rowsOf(db: Db, ids: number[]): Promise<RecipientRow[]> {
  return db('recipients').whereIn('id', ids).orderBy('id');
}

describe.each(STORES)('outcomes written as one batch (%s)', (kind) => {
  it('writes each outcome only under its lease, with one event per finished recipient, its webhook delivery and a suppression for a permanent bounce', async () => {
    const { db } = await migratedStore(kind);
    const a = await messageWith(db, ['sending', 'sending', 'sending', 'sending'], at);
    const b = await messageWith(db, ['sending'], at);
    const endpointId = await webhooksRepo.insertEndpoint(db, {
      workspace_id: a.workspaceId,
      url: 'https://hooks.example.org/all',
      events: null,
      secret: 'whsec_all',
      status: 'active',
      failure_count: 0,
      last_success_at: null,
      created_at: at,
      updated_at: at,
    });
    // Another worker took a's last recipient after our lease ran out.
    await db('recipients').where({ id: a.recipientIds[3] }).update({ lease_owner: 'w2' });

    const [ra, rb] = [await rowsOf(db, a.recipientIds), await rowsOf(db, b.recipientIds)];
    const message = (id: number) => ({ id, workspace_id: a.workspaceId, stream: 'transactional' as const, domain: 'acme.test', envelope: '{"tags":[]}' });
    const batch: Attempt[] = [
      { row: ra[0]!, message: message(a.messageId), verdict: delivered },
      { row: ra[1]!, message: message(a.messageId), verdict: gone },
      { row: ra[2]!, message: message(a.messageId), verdict: later },
      { row: ra[3]!, message: message(a.messageId), verdict: delivered },
      { row: rb[0]!, message: message(b.messageId), verdict: delivered },
    ];
    const recorded = await db.transaction((tx) => recordVerdicts(tx, batch, deps('w1')));
    expect(recorded.map((r) => r.outcome)).toStrictEqual(['delivered', 'bounced', 'deferred', 'lease_lost', 'delivered']);
    expect(recorded[2]).toMatchObject({ attempts: 1, dueAt: now + 60_000 });

    const after = await rowsOf(db, [...a.recipientIds, ...b.recipientIds]);
    expect(after.map((r) => [r.status, r.lease_owner, r.attempts, r.due_at === null ? null : Number(r.due_at)])).toStrictEqual([
      ['delivered', null, 1, null],
      ['bounced', null, 1, null],
      ['deferred', null, 1, now + 60_000],
      ['sending', 'w2', 0, at],
      ['delivered', null, 1, null],
    ]);
    expect(after[0]).toMatchObject({ last_response: '250 2.0.0 Ok: queued', last_mx: 'mx.example.org' });
    const statuses = Object.fromEntries((await db('messages').select('id', 'status')).map((m: { id: number; status: string }) => [m.id, m.status]));
    expect(statuses).toStrictEqual({ [a.messageId]: 'sending', [b.messageId]: 'delivered' });

    const suppressed = await db('suppressions').select('address', 'reason');
    expect(suppressed).toStrictEqual([{ address: 'r1@example.org', reason: 'bounce' }]);

    // The other worker's outcome for a's last recipient, at the same millisecond: a's second
    // `email.delivered` is bumped by 1 ms, so (email, event, occurred_at) stays unique.
    const [takenOver] = await rowsOf(db, [a.recipientIds[3]!]);
    expect((await db.transaction((tx) => recordVerdicts(tx, [{ row: takenOver!, message: message(a.messageId), verdict: delivered }], deps('w2'))))[0]!.outcome).toBe(
      'delivered',
    );
    const events: { id: number; email_id: number; recipient_id: number; event: string; occurred_at: number | string; payload: string }[] =
      await db('events').orderBy('id');
    expect(events.map((e) => [e.email_id, e.recipient_id, e.event, Number(e.occurred_at)])).toStrictEqual([
      [a.messageId, a.recipientIds[0], 'email.delivered', now],
      [a.messageId, a.recipientIds[1], 'email.bounced', now],
      [b.messageId, b.recipientIds[0], 'email.delivered', now],
      [a.messageId, a.recipientIds[3], 'email.delivered', now + 1],
    ]);
    expect(JSON.parse(events[1]!.payload)).toStrictEqual({
      event: 'email.bounced',
      occurred_at: new Date(now).toISOString(),
      email_id: a.messageId,
      recipient: 'r1@example.org',
      bounce_type: 'permanent',
      provider: { response: '550 5.1.1 No such user', reporting_mta: 'mx.example.org', status: '5.1.1', smtp_code: 550 },
    });
    expect(JSON.parse(events[3]!.payload).occurred_at).toBe(new Date(now + 1).toISOString());
    for (const e of events) expect((await webhooksRepo.deliveriesOf(db, e.id)).map((d) => [d.endpoint_id, d.status])).toStrictEqual([[endpointId, 'pending']]);
    expect((await db('messages').where({ id: a.messageId }).first()).status).toBe('deferred');
    await db.destroy();
  });

  it.runIf(kind === 'pg')('locks the messages with the recipients, then derives statuses and reads events in one round trip', async () => {
    const { db } = await migratedStore(kind);
    const a = await messageWith(db, ['sending', 'sending'], at);
    await db('recipients').whereIn('id', a.recipientIds).update({ lease_owner: 'w1' });
    const rows = await rowsOf(db, a.recipientIds);
    const seen: string[] = [];
    db.on('query', (q: { sql: string }) => seen.push(q.sql.trim().split(/\s+/)[0]!.toLowerCase()));
    await db.transaction(async (tx) => {
      const written = await queueRepo.finishLeased(
        tx,
        'w1',
        [{ id: rows[0]!.id, status: 'delivered', dueAt: null, attempts: 1, lastResponse: '250 ok', lastMx: 'mx', sourceAddress: null }],
        now,
      );
      expect([...written]).toStrictEqual([rows[0]!.id]);
      // The message row is already ours: another transaction cannot take it.
      await expect(db.raw('select id from messages where id = ? for update nowait', [a.messageId])).rejects.toThrow(/could not obtain lock/);
    });
    seen.length = 0;
    const message = { id: a.messageId, workspace_id: a.workspaceId, stream: 'transactional' as const, domain: 'acme.test', envelope: '{"tags":[]}' };
    const recorded = await db.transaction((tx) => recordVerdicts(tx, [{ row: rows[1]!, message, verdict: delivered }], deps('w1')));
    expect(recorded.map((r) => r.outcome)).toStrictEqual(['delivered']);
    // BEGIN, the rows with their messages' locks, the statuses with the events' latest times,
    // the events, the webhook endpoints, COMMIT.
    expect(seen).toStrictEqual(['begin;', 'with', 'with', 'insert', 'select', 'commit;']);
    expect((await db('messages').where({ id: a.messageId }).first()).status).toBe('delivered');
    await db.destroy();
  });
});
