import { describe, expect, it } from 'vitest';
import { recordEvent, type NewEvent } from '../../src/events/record.ts';
import { eventsRepo } from '../../src/store/events.ts';
import { messageWith, migratedStore, someoneWaitsForLock } from '../helpers/db.ts';
import { STORES } from '../helpers/stores.ts';

const at = 1_700_000_100_000;
const delivered = (emailId: number, workspaceId: number, recipientId: number, n: number): NewEvent => ({
  workspaceId,
  emailId,
  recipientId,
  event: 'email.delivered',
  recipient: `r${n}@example.org`,
  provider: { response: '250 ok', reporting_mta: 'mx.example.org' },
  at,
});

describe.each(STORES)('event times (%s)', (kind) => {
  it('gives events of one kind for one message distinct times, bumped by a millisecond', async () => {
    const { db } = await migratedStore(kind);
    const { messageId, workspaceId, recipientIds } = await messageWith(db, ['sending', 'sending', 'sending']);
    const payloads = await db.transaction(async (tx) => {
      const out = [];
      for (const [i, id] of recipientIds.entries()) out.push(await recordEvent(tx, delivered(messageId, workspaceId, id, i)));
      return out;
    });
    expect(payloads.map((p) => p.occurred_at)).toStrictEqual(['2023-11-14T22:15:00.000Z', '2023-11-14T22:15:00.001Z', '2023-11-14T22:15:00.002Z']);
    expect((await eventsRepo.payloadsOf(db, messageId)).map((p) => JSON.parse(p).recipient)).toStrictEqual(['r0@example.org', 'r1@example.org', 'r2@example.org']);
  });
});

describe.runIf(STORES.includes('pg'))('event times under concurrency (pg)', () => {
  it('two concurrent email.delivered records for one message both commit, with distinct times', async () => {
    const { db, open } = await migratedStore('pg');
    const [a, b] = [open(), open()];
    const { messageId, workspaceId, recipientIds } = await messageWith(db, ['sending', 'sending']);

    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let firstDone!: () => void;
    const firstHasWritten = new Promise<void>((resolve) => (firstDone = resolve));
    const first = a.transaction(async (tx) => {
      const payload = await recordEvent(tx, delivered(messageId, workspaceId, recipientIds[0], 0));
      firstDone();
      await released;
      return payload;
    });
    await firstHasWritten;
    const second = b.transaction((tx) => recordEvent(tx, delivered(messageId, workspaceId, recipientIds[1], 1)));
    await someoneWaitsForLock(db);
    release();
    const [p1, p2] = await Promise.all([first, second]);

    expect([p1.occurred_at, p2.occurred_at]).toStrictEqual(['2023-11-14T22:15:00.000Z', '2023-11-14T22:15:00.001Z']);
    const stored = (await eventsRepo.payloadsOf(db, messageId)).map((p) => JSON.parse(p));
    expect(stored.map((p) => [p.recipient, p.occurred_at])).toStrictEqual([
      ['r0@example.org', '2023-11-14T22:15:00.000Z'],
      ['r1@example.org', '2023-11-14T22:15:00.001Z'],
    ]);
  });
});
