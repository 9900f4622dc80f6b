import { describe, expect, it } from 'vitest';
import { RECIPIENT_STATUSES, messageStatusOf, type RecipientStatus } from '../../src/messages/status.ts';
import { messagesRepo } from '../../src/store/messages.ts';
import { queueRepo } from '../../src/store/queue.ts';
import { messagesWith, messageWith, migratedStore, someoneWaitsForLock } from '../helpers/db.ts';
import { STORES } from '../helpers/stores.ts';

/** Lists of `size` statuses, each list once whatever its order. */
function multisets(size: number, from = 0): RecipientStatus[][] {
  if (size === 0) return [[]];
  const out: RecipientStatus[][] = [];
  for (let i = from; i < RECIPIENT_STATUSES.length; i++) {
    for (const rest of multisets(size - 1, i)) out.push([RECIPIENT_STATUSES[i], ...rest]);
  }
  return out;
}

/** Every set of recipient statuses, the empty one included. */
const ALL_SETS = RECIPIENT_STATUSES.reduce<RecipientStatus[][]>((out, s) => out.concat(out.map((set) => [...set, s])), [[]]);

describe.each(STORES)('message status derived in the database (%s)', (kind) => {
  it('follows the rule (messages/status.ts) for every set of recipient statuses and every list of up to three', async () => {
    const { db } = await migratedStore(kind);
    // The SQL counts recipients: lists with repeats check that counts do not matter.
    const combos = [...[1, 2, 3].flatMap((n) => multisets(n)), ...ALL_SETS.filter((set) => set.length > 3)];
    expect(combos).toHaveLength(10 + 55 + 220 + 848);
    const { messages } = await messagesWith(db, combos);
    const stored = await messagesRepo.byIds(
      db,
      messages.map((m) => m.messageId),
    );
    const wrong = combos.flatMap((statuses, i) => {
      const status = stored.get(messages[i]!.messageId)!.status;
      return status === messageStatusOf(statuses) ? [] : [`${statuses.join(',')} → ${status}, expected ${messageStatusOf(statuses)}`];
    });
    expect(wrong).toStrictEqual([]);
  });

  it('follows each recipient change: claim, outcome, cancel', async () => {
    const { db } = await migratedStore(kind);
    const at = 1_700_000_000_000;
    const { messageId, recipientIds } = await messageWith(db, ['queued', 'queued'], at);
    const status = async () => (await messagesRepo.byId(db, messageId))!.status;
    const claimed = await queueRepo.claim(db, { owner: 'w1', now: at, leaseMs: 60_000, limit: 1 });
    expect(claimed.map((r) => r.id)).toStrictEqual([recipientIds[0]]);
    expect(await status()).toBe('sending');
    await db.transaction((tx) => messagesRepo.finishRecipient(tx, messageId, recipientIds[0], 'delivered', at));
    expect(await status()).toBe('queued');
    await db.transaction((tx) => messagesRepo.finishRecipient(tx, messageId, recipientIds[1], 'bounced', at));
    expect(await status()).toBe('partial');

    const scheduled = await messageWith(db, ['scheduled', 'suppressed'], at);
    await db.transaction((tx) => messagesRepo.setRecipientStatus(tx, scheduled.messageId, 'scheduled', 'canceled', at));
    expect((await messagesRepo.byId(db, scheduled.messageId))!.status).toBe('canceled');
  });
});

describe.runIf(STORES.includes('pg'))('message status under concurrency (pg)', () => {
  it('two transactions finishing the last two recipients concurrently leave the message delivered', async () => {
    const { db, open } = await migratedStore('pg');
    const [a, b] = [open(), open()];
    const { messageId, recipientIds } = await messageWith(db, ['sending', 'sending']);
    const at = 1_700_000_100_000;

    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let firstDone!: () => void;
    const firstHasWritten = new Promise<void>((resolve) => (firstDone = resolve));
    const first = a.transaction(async (tx) => {
      await messagesRepo.finishRecipient(tx, messageId, recipientIds[0], 'delivered', at);
      firstDone();
      await released;
    });
    await firstHasWritten;
    // The second transaction runs while the first holds its writes uncommitted.
    const second = b.transaction((tx) => messagesRepo.finishRecipient(tx, messageId, recipientIds[1], 'delivered', at));
    await someoneWaitsForLock(db);
    release();
    await Promise.all([first, second]);

    expect((await messagesRepo.recipients(db, messageId)).map((r) => r.status)).toStrictEqual(['delivered', 'delivered']);
    expect((await messagesRepo.byId(db, messageId))!.status).toBe('delivered');
  });
});
