import { describe, expect, it } from 'vitest';
import { RECIPIENT_STATUSES, messageStatusOf, type RecipientStatus } from '../../src/messages/status.ts';
import type { Db } from '../../src/store/db.ts';
import { messagesRepo } from '../../src/store/messages.ts';
import { queueRepo } from '../../src/store/queue.ts';
import { messagesWith, migratedStore, type RecipientSpec } from '../helpers/db.ts';
import { STORES } from '../helpers/stores.ts';

const AT = 1_700_000_000_000;
const subsets = <T>(items: readonly T[]): T[][] => items.reduce<T[][]>((out, item) => out.concat(out.map((s) => [...s, item])), [[]]);

/**
 * For every set of recipient statuses with at least one of `moving`, and every choice of which of
 * those statuses the move takes wholly (the others keep a recipient due later, out of its reach):
 * the recipients of one message. On PostgreSQL the claim and the release set the messages'
 * statuses without reading their recipients again; this holds them to the rule.
 */
function moves(moving: RecipientStatus[]): RecipientSpec[][] {
  return subsets(RECIPIENT_STATUSES).flatMap((set) => {
    const moved = set.filter((s) => moving.includes(s));
    if (moved.length === 0) return [];
    return subsets(moved).map((wholly) => [...set, ...moved.filter((s) => !wholly.includes(s)).map((status) => ({ status, dueAt: AT + 1 }))]);
  });
}

/** Messages whose status is not the rule's for their recipients' statuses now. */
async function offRule(db: Db, messageIds: number[]): Promise<string[]> {
  const stored = await messagesRepo.byIds(db, messageIds);
  const statuses = new Map<number, RecipientStatus[]>();
  for (const r of (await db('recipients').select('message_id', 'status')) as { message_id: number; status: RecipientStatus }[]) {
    statuses.set(r.message_id, [...(statuses.get(r.message_id) ?? []), r.status]);
  }
  return messageIds.flatMap((id) => {
    const status = stored.get(id)!.status;
    const rule = messageStatusOf(statuses.get(id)!);
    return status === rule ? [] : [`${statuses.get(id)!.join(',')} → ${status}, expected ${rule}`];
  });
}

describe.each(STORES)('statuses set by the claim and the release of scheduled rows (%s)', (kind) => {
  it('a claim leaves every message with the status the rule gives its recipients', async () => {
    const { db } = await migratedStore(kind);
    const specs = moves(['queued', 'deferred', 'sending']);
    expect(specs).toHaveLength(128 * 27 - 128);
    const { messages } = await messagesWith(db, specs, AT);
    const due = specs.flat().filter((s) => typeof s === 'string' && ['queued', 'deferred', 'sending'].includes(s)).length;
    const claimed = await queueRepo.claim(db, { owner: 'w2', now: AT, leaseMs: 60_000, limit: 100_000 });
    expect(claimed).toHaveLength(due);
    expect(
      await offRule(
        db,
        messages.map((m) => m.messageId),
      ),
    ).toStrictEqual([]);
  });

  it('releasing scheduled rows leaves every message with the status the rule gives its recipients', async () => {
    const { db } = await migratedStore(kind);
    const specs = moves(['scheduled']);
    expect(specs).toHaveLength(512 * 2);
    const { messages } = await messagesWith(db, specs, AT);
    const released = await queueRepo.releaseScheduled(db, AT, 100_000);
    expect(released).toBe(512 * 2);
    expect(
      await offRule(
        db,
        messages.map((m) => m.messageId),
      ),
    ).toStrictEqual([]);
  });
});
