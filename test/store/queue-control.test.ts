import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/core/errors.ts';
import type { RecipientStatus } from '../../src/messages/status.ts';
import { insertedId, type Db } from '../../src/store/db.ts';
import { deriveMessageStatuses } from '../../src/store/messageStatus.ts';
import { queueRepo } from '../../src/store/queue.ts';
import { queueControlRepo, type QueueFilter } from '../../src/store/queue-control.ts';
import { usageRepo } from '../../src/store/usage.ts';
import { workspaces } from '../../src/store/workspaces.ts';
import { migratedStore, someoneWaitsForLock } from '../helpers/db.ts';
import { STORES, type StoreKind } from '../helpers/stores.ts';

const AT = 1_700_000_000_000;
const MINUTE = 60_000;
const DAY = new Date(AT).toISOString().slice(0, 10);

interface Mail {
  workspace: 'a' | 'b';
  stream?: 'transactional' | 'broadcast';
  from?: string;
  /** Recipients: address, and status (queued unless given). */
  to: (string | [string, RecipientStatus])[];
  attempts?: number;
}

/**
 * Two workspaces with mail to a provider's two domains (one group), a domain of its own group
 * and a domain no delivery has looked up yet; each workspace's usage counts its mail as accepting
 * would.
 */
async function world(kind: StoreKind) {
  const { db, open } = await migratedStore(kind);
  const ws = {
    a: await workspaces.insert(db, { name: 'a', plan: 'free', rate_per_minute: 10, rate_per_hour: 100, created_at: AT }),
    b: await workspaces.insert(db, { name: 'b', plan: 'free', rate_per_minute: 10, rate_per_hour: 100, created_at: AT }),
  };
  await db('delivery_domains').insert([
    { domain: 'gmail.com', group_name: 'provider:google', expires_at: AT + 3_600_000 },
    { domain: 'corp.example', group_name: 'provider:google', expires_at: AT + 3_600_000 },
    { domain: 'other.org', group_name: 'mx:mx.other.org', expires_at: AT + 3_600_000 },
  ]);
  const mail = async (m: Mail) => {
    const workspaceId = ws[m.workspace].id;
    const from = m.from ?? `${m.workspace}.test`;
    return db.transaction(async (tx) => {
      const [row] = await tx('messages')
        .insert({
          workspace_id: workspaceId,
          api_key_id: null,
          domain: from,
          stream: m.stream ?? 'transactional',
          source: 'api',
          from_header: `x@${from}`,
          from_address: `x@${from}`,
          subject: 's',
          envelope: '{}',
          message_id_header: '<m@x>',
          status: 'queued',
          created_at: AT,
          scheduled_at: null,
        })
        .returning('id');
      const messageId = insertedId(row);
      const recipients = m.to.map((spec) => {
        const [address, status] = typeof spec === 'string' ? [spec, 'queued' as RecipientStatus] : spec;
        return {
          message_id: messageId,
          workspace_id: workspaceId,
          address,
          domain: address.split('@')[1]!,
          kind: 'to',
          status,
          attempts: m.attempts ?? 0,
          due_at: status === 'scheduled' ? AT + 3_600_000 : AT,
          first_due_at: AT,
          lease_owner: status === 'sending' ? 'w1' : null,
          lease_until: status === 'sending' ? AT + MINUTE : null,
          created_at: AT,
          updated_at: AT,
        };
      });
      await tx('recipients').insert(recipients);
      await deriveMessageStatuses(tx, [messageId]);
      await usageRepo.addition(tx, workspaceId, DAY, m.stream ?? 'transactional', recipients.length);
      return messageId;
    });
  };
  return { db, open, ws, mail };
}

/** Each recipient's address and status, in address order. */
async function statuses(db: Db): Promise<Record<string, string>> {
  const rows: { address: string; status: string }[] = await db('recipients').orderBy('address').select('address', 'status');
  return Object.fromEntries(rows.map((r) => [r.address, r.status]));
}

const held = async (db: Db) =>
  Object.entries(await statuses(db))
    .filter(([, s]) => s === 'held')
    .map(([a]) => a);

describe.each(STORES)('queue control in the store (%s)', (kind) => {
  it('holds exactly the waiting recipients each filter names, whatever field it uses', async () => {
    const cases: [string, (w: Awaited<ReturnType<typeof world>>, ids: Record<string, number>) => QueueFilter, string[]][] = [
      ['domain', () => ({ domain: 'GMAIL.com' }), ['a1@gmail.com', 'b1@gmail.com']],
      ['group', () => ({ group: 'provider:google' }), ['a1@gmail.com', 'a2@corp.example', 'b1@gmail.com']],
      ['workspace', (w) => ({ workspaceId: w.ws.b.id }), ['b1@gmail.com', 'b2@other.org']],
      ['stream', () => ({ stream: 'broadcast' }), ['a3@other.org', 'a4@new.example']],
      ['sending domain', () => ({ sendingDomain: 'news.a.test' }), ['a4@new.example']],
      ['message', (_, ids) => ({ messageId: ids.first }), ['a1@gmail.com', 'a2@corp.example']],
      ['conjunction', (w) => ({ workspaceId: w.ws.a.id, group: 'provider:google', domain: 'corp.example' }), ['a2@corp.example']],
    ];
    for (const [name, filter, expected] of cases) {
      const w = await world(kind);
      const ids = {
        first: await w.mail({ workspace: 'a', to: ['a1@gmail.com', 'a2@corp.example', ['a0@gmail.com', 'sending'], ['a9@gmail.com', 'scheduled']] }),
        broadcast: await w.mail({ workspace: 'a', stream: 'broadcast', to: ['a3@other.org'], attempts: 1 }),
        news: await w.mail({ workspace: 'a', stream: 'broadcast', from: 'news.a.test', to: ['a4@new.example'] }),
        other: await w.mail({ workspace: 'b', to: ['b1@gmail.com', 'b2@other.org', ['b0@gmail.com', 'delivered']] }),
      };
      const affected = await queueControlRepo.hold(w.db, filter(w, ids), AT + MINUTE);
      expect([name, await held(w.db)]).toStrictEqual([name, expected]);
      expect([name, affected]).toStrictEqual([name, expected.length]);
      // Sending, scheduled and finished rows are never held.
      expect(await statuses(w.db)).toMatchObject({ 'a0@gmail.com': 'sending', 'a9@gmail.com': 'scheduled', 'b0@gmail.com': 'delivered' });
    }
  });

  it('derives message statuses: held only while nothing more advanced is unfinished', async () => {
    const w = await world(kind);
    const all = await w.mail({ workspace: 'a', to: ['x@gmail.com', 'y@gmail.com'] });
    const part = await w.mail({ workspace: 'a', to: ['z@gmail.com', 'q@other.org'] });
    const later = await w.mail({ workspace: 'a', to: ['s@gmail.com', ['t@other.org', 'scheduled']] });
    await queueControlRepo.hold(w.db, { domain: 'gmail.com' }, AT);
    const status = async (id: number) => ((await w.db('messages').where({ id }).first('status')) as { status: string }).status;
    expect([await status(all), await status(part), await status(later)]).toStrictEqual(['held', 'queued', 'scheduled']);
  });

  it('refuses a filter that names nothing with a 422', async () => {
    const w = await world(kind);
    await w.mail({ workspace: 'a', to: ['x@gmail.com'] });
    for (const act of [queueControlRepo.hold, queueControlRepo.release, queueControlRepo.cancel]) {
      const err = await act(w.db, {}, AT).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServiceError);
      expect(err).toMatchObject({ status: 422, message: expect.stringMatching(/^Name at least one of domain, group, workspace, stream, email/) });
    }
    expect(await statuses(w.db)).toStrictEqual({ 'x@gmail.com': 'queued' });
  });

  it('never claims a held row, and a standing hold keeps later mail from being claimed until the sweep holds it', async () => {
    const w = await world(kind);
    await w.mail({ workspace: 'a', to: ['x@gmail.com', 'y@other.org'] });
    expect(await queueControlRepo.hold(w.db, { group: 'provider:google' }, AT)).toBe(1);
    expect(await queueControlRepo.hold(w.db, { group: 'provider:google' }, AT)).toBe(0);
    expect(await w.db('queue_holds').count({ n: '*' })).toMatchObject([{ n: 1 }]);

    // Accepted after the hold: queued, but neither claimed nor sent.
    await w.mail({ workspace: 'b', to: ['late@corp.example', 'free@other.org'] });
    const claimed = await queueRepo.claim(w.db, { owner: 'w1', now: AT + MINUTE, leaseMs: 60 * MINUTE, limit: 100 });
    expect(claimed.map((r) => r.address).sort()).toStrictEqual(['free@other.org', 'y@other.org']);
    expect(await statuses(w.db)).toMatchObject({ 'late@corp.example': 'queued', 'x@gmail.com': 'held' });

    expect(await queueControlRepo.sweepHolds(w.db, AT + 2 * MINUTE)).toBe(1);
    expect(await statuses(w.db)).toMatchObject({ 'late@corp.example': 'held' });
    expect(await queueControlRepo.sweepHolds(w.db, AT + 3 * MINUTE)).toBe(0);
    expect(await queueRepo.claim(w.db, { owner: 'w1', now: AT + 10 * MINUTE, leaseMs: MINUTE, limit: 100 })).toStrictEqual([]);
  });

  it('sweeps only due rows: a deferred row waiting for its retry is held once it falls due', async () => {
    const w = await world(kind);
    await w.db('queue_holds').insert({ filter_key: 'gmail', domain: 'gmail.com', created_at: AT });
    await w.mail({ workspace: 'a', to: ['later@gmail.com', 'now@gmail.com'], attempts: 1 });
    await w.db('recipients').update({ status: 'deferred' });
    await w
      .db('recipients')
      .where({ address: 'later@gmail.com' })
      .update({ due_at: AT + 10 * MINUTE });
    expect(await queueControlRepo.sweepHolds(w.db, AT)).toBe(1);
    expect(await statuses(w.db)).toStrictEqual({ 'later@gmail.com': 'deferred', 'now@gmail.com': 'held' });
    expect(await queueControlRepo.sweepHolds(w.db, AT + 10 * MINUTE)).toBe(1);
    expect(await held(w.db)).toStrictEqual(['later@gmail.com', 'now@gmail.com']);
  });

  it('sweeps nothing, cheaply, while no hold is stored', async () => {
    const w = await world(kind);
    await w.mail({ workspace: 'a', to: ['x@gmail.com'] });
    expect(await queueControlRepo.hasHolds(w.db)).toBe(false);
    expect(await queueControlRepo.sweepHolds(w.db, AT)).toBe(0);
    await queueControlRepo.hold(w.db, { domain: 'nowhere.example' }, AT);
    expect(await queueControlRepo.hasHolds(w.db)).toBe(true);
    expect(await queueControlRepo.sweepHolds(w.db, AT)).toBe(0);
  });

  it('releases held rows due now, deferred once tried, their retry window moved by the time held', async () => {
    const w = await world(kind);
    await w.mail({ workspace: 'a', to: ['fresh@gmail.com'] });
    await w.mail({ workspace: 'a', to: ['tried@gmail.com'], attempts: 2 });
    await queueControlRepo.hold(w.db, { domain: 'gmail.com' }, AT + 10 * MINUTE);
    const releasedAt = AT + 70 * MINUTE;
    expect(await queueControlRepo.release(w.db, { domain: 'gmail.com' }, releasedAt)).toBe(2);
    const rows: { address: string; status: string; due_at: number; first_due_at: number; held_at: number | null }[] = await w
      .db('recipients')
      .orderBy('address')
      .select('address', 'status', 'due_at', 'first_due_at', 'held_at');
    // Held for an hour: the retry window (delivery.maxAge) counts from an hour later.
    expect(rows.map((r) => ({ ...r, due_at: Number(r.due_at), first_due_at: Number(r.first_due_at) }))).toStrictEqual([
      { address: 'fresh@gmail.com', status: 'queued', due_at: releasedAt, first_due_at: AT + 60 * MINUTE, held_at: null },
      { address: 'tried@gmail.com', status: 'deferred', due_at: releasedAt, first_due_at: AT + 60 * MINUTE, held_at: null },
    ]);
    expect(await queueControlRepo.hasHolds(w.db)).toBe(false);
    expect((await queueRepo.claim(w.db, { owner: 'w1', now: releasedAt, leaseMs: MINUTE, limit: 10 })).length).toBe(2);
  });

  it('lifts only the holds a release covers: a workspace cannot lift a server-wide hold', async () => {
    const w = await world(kind);
    await w.mail({ workspace: 'a', to: ['x@gmail.com'] });
    await w.mail({ workspace: 'b', to: ['y@gmail.com'] });
    await queueControlRepo.hold(w.db, { domain: 'gmail.com' }, AT);
    await queueControlRepo.hold(w.db, { workspaceId: w.ws.a.id, group: 'provider:google' }, AT);
    // Workspace a's release lifts its own hold, not the server-wide one still covering its mail.
    expect(await queueControlRepo.release(w.db, { workspaceId: w.ws.a.id, group: 'provider:google' }, AT)).toBe(0);
    expect(await w.db('queue_holds').pluck('domain')).toStrictEqual(['gmail.com']);
    expect(await held(w.db)).toStrictEqual(['x@gmail.com', 'y@gmail.com']);
    // The server-wide release by domain lifts it.
    expect(await queueControlRepo.release(w.db, { domain: 'gmail.com' }, AT)).toBe(2);
    expect(await held(w.db)).toStrictEqual([]);
  });

  it('cancels unfinished rows not in flight, takes their usage back, suppresses nothing', async () => {
    const w = await world(kind);
    const mixed = await w.mail({ workspace: 'a', to: ['q@gmail.com', ['s@gmail.com', 'scheduled'], ['f@gmail.com', 'sending'], ['d@gmail.com', 'delivered']] });
    await w.mail({ workspace: 'a', to: ['h@gmail.com'], attempts: 1 });
    await w.mail({ workspace: 'a', stream: 'broadcast', to: ['n@gmail.com', 'keep@other.org'] });
    await w.mail({ workspace: 'b', to: ['b@gmail.com'] });
    await queueControlRepo.hold(w.db, { domain: 'gmail.com', workspaceId: w.ws.a.id }, AT);
    expect(await queueControlRepo.cancel(w.db, { domain: 'gmail.com', workspaceId: w.ws.a.id }, AT + MINUTE)).toBe(4);
    expect(await statuses(w.db)).toStrictEqual({
      'b@gmail.com': 'queued',
      'd@gmail.com': 'delivered',
      'f@gmail.com': 'sending',
      'h@gmail.com': 'canceled',
      'keep@other.org': 'queued',
      'n@gmail.com': 'canceled',
      'q@gmail.com': 'canceled',
      's@gmail.com': 'canceled',
    });
    expect(((await w.db('messages').where({ id: mixed }).first('status')) as { status: string }).status).toBe('sending');
    // Accepted: 4 + 1 transactional and 2 broadcast; canceled: 3 and 1.
    expect(await usageRepo.list(w.db, w.ws.a.id, DAY, DAY)).toStrictEqual([
      { day: DAY, stream: 'broadcast', count: 1 },
      { day: DAY, stream: 'transactional', count: 2 },
    ]);
    expect(await usageRepo.list(w.db, w.ws.b.id, DAY, DAY)).toStrictEqual([{ day: DAY, stream: 'transactional', count: 1 }]);
    expect(await w.db('suppressions').count({ n: '*' })).toMatchObject([{ n: 0 }]);
    expect(await w.db('events').count({ n: '*' })).toMatchObject([{ n: 0 }]);
  });

  it('counts waiting mail per destination group, with holds, suspensions and the unresolved', async () => {
    const w = await world(kind);
    await w.mail({ workspace: 'a', to: ['x@gmail.com', 'y@corp.example', 'z@other.org', 'u@new.example'] });
    await w.mail({ workspace: 'a', to: ['d@gmail.com'], attempts: 1 });
    await w.db('recipients').where({ address: 'd@gmail.com' }).update({ status: 'deferred' });
    await w.mail({ workspace: 'b', to: ['b@other.org'] });
    await queueControlRepo.hold(w.db, { group: 'mx:mx.other.org' }, AT, 'provider asked us to wait');
    await w.db('delivery_groups').insert([
      { name: 'provider:google', suspended_until: AT + 5 * MINUTE, reason: '421 4.7.28 rate limited', updated_at: AT },
      { name: 'mx:mx.other.org', suspended_until: AT - MINUTE, reason: 'long over', updated_at: AT },
    ]);
    const all = await queueControlRepo.groupStats(w.db, { now: AT });
    expect(all).toStrictEqual([
      { group: 'mx:mx.other.org', queued: 0, deferred: 0, held: 2, onHold: true, holdReason: 'provider asked us to wait', suspendedUntil: null, reason: null },
      { group: 'provider:google', queued: 2, deferred: 1, held: 0, onHold: false, holdReason: null, suspendedUntil: AT + 5 * MINUTE, reason: '421 4.7.28 rate limited' },
      { group: 'unresolved', queued: 1, deferred: 0, held: 0, onHold: false, holdReason: null, suspendedUntil: null, reason: null },
    ]);
    const b = await queueControlRepo.groupStats(w.db, { workspaceId: w.ws.b.id, now: AT });
    expect(b.map((g) => [g.group, g.held, g.onHold])).toStrictEqual([['mx:mx.other.org', 1, true]]);
  });
});

describe.runIf(STORES.includes('pg'))('queue control beside claims (pg)', () => {
  it('a hold waits for a row a claim has locked and then leaves it sending; the sweep skips it without waiting', async () => {
    const w = await world('pg');
    const claimer = w.open();
    await w.mail({ workspace: 'a', to: ['claimed@gmail.com', 'waiting@gmail.com'] });
    // A claim in flight: the row is locked and sending, not yet committed.
    let commit!: () => void;
    const committed = new Promise<void>((resolve) => (commit = resolve));
    let locked!: () => void;
    const hasLocked = new Promise<void>((resolve) => (locked = resolve));
    const claim = claimer.transaction(async (tx) => {
      await tx('recipients')
        .where({ address: 'claimed@gmail.com' })
        .update({ status: 'sending', lease_owner: 'w9', lease_until: AT + MINUTE });
      locked();
      await committed;
    });
    await hasLocked;
    // A standing hold stored as is (holding through the repository would wait for the lock).
    await w.db('queue_holds').insert({ filter_key: 'gmail', domain: 'gmail.com', created_at: AT });
    // The sweep skips the locked row rather than wait for it.
    expect(await queueControlRepo.sweepHolds(w.db, AT)).toBe(1);
    // Queued again; a hold through the repository now waits for the claim, then re-reads the row.
    await w.db('recipients').where({ address: 'waiting@gmail.com' }).update({ status: 'queued' });
    const hold = queueControlRepo.hold(w.open(), { domain: 'gmail.com' }, AT);
    await someoneWaitsForLock(w.db);
    commit();
    await claim;
    expect(await hold).toBe(1);
    expect(await statuses(w.db)).toStrictEqual({ 'claimed@gmail.com': 'sending', 'waiting@gmail.com': 'held' });
  });
});
