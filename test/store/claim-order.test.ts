import { describe, expect, it } from 'vitest';
import type { RecipientStatus } from '../../src/messages/status.ts';
import { queueRepo, type ClaimRequest } from '../../src/store/queue.ts';
import { messagesWith, migratedStore } from '../helpers/db.ts';
import { STORES } from '../helpers/stores.ts';

const NOW = 1_700_000_000_000;

/** Due rows of the three claimable statuses, interleaved in time, and rows not due yet. */
const SPECS: { status: RecipientStatus; dueAt: number }[] = [
  ...Array.from({ length: 12 }, (_, i) => ({ status: (['queued', 'deferred', 'sending'] as const)[i % 3], dueAt: NOW - 1_000 * (12 - i) })),
  { status: 'queued', dueAt: NOW + 1_000 },
  { status: 'deferred', dueAt: NOW + 2_000 },
  // A lease that has not run out yet: its due_at is the lease's end.
  { status: 'sending', dueAt: NOW + 3_000 },
];

const SHAPES: [string, ClaimRequest['shape']][] = [
  ['unshaped', undefined],
  ['shaped', { exclude: [], caps: [], defaultCap: 100 }],
];

describe.each(STORES)('the rows a claim takes (%s)', (kind) => {
  it.each(SHAPES)('%s: the oldest due rows whatever their status, none before its time', async (_name, shape) => {
    const { db } = await migratedStore(kind);
    const { messages } = await messagesWith(db, [SPECS], NOW);
    const ids = messages[0]!.recipientIds;

    const first = await queueRepo.claim(db, { owner: 'w2', now: NOW, leaseMs: 60_000, limit: 5, shape });
    expect(first.map((r) => r.id).sort((a, b) => a - b)).toStrictEqual(ids.slice(0, 5));

    const rest = await queueRepo.claim(db, { owner: 'w2', now: NOW, leaseMs: 60_000, limit: 100, shape });
    expect(rest.map((r) => r.id).sort((a, b) => a - b)).toStrictEqual(ids.slice(5, 12));
    expect(new Set(rest.map((r) => r.status))).toStrictEqual(new Set(['sending']));
  });

  it('a shaped claim takes at most its group’s cap, the oldest of the group’s due rows', async () => {
    const { db } = await migratedStore(kind);
    const busy = Array.from({ length: 30 }, (_, i) => ({ status: 'queued' as const, dueAt: NOW - 100_000 + i }));
    const { messages } = await messagesWith(db, [[...busy, { status: 'deferred', dueAt: NOW - 10 }]], NOW);
    const ids = messages[0]!.recipientIds;
    // Every row is to example.org: one group, capped at 2 a claim, the deferred row newest.
    const claimed = await queueRepo.claim(db, { owner: 'w2', now: NOW, leaseMs: 60_000, limit: 5, shape: { exclude: [], caps: [], defaultCap: 2 } });
    expect(claimed.map((r) => r.id).sort((a, b) => a - b)).toStrictEqual(ids.slice(0, 2));
  });
});

describe.each(STORES.filter((kind) => kind === 'pg'))('a claim beside another worker’s (%s)', (kind) => {
  it('passes over the rows another transaction holds and still takes as many due rows as it asks for', async () => {
    const { db } = await migratedStore(kind);
    const { messages } = await messagesWith(db, [Array.from({ length: 60 }, (_, i) => ({ status: 'queued' as const, dueAt: NOW - 100_000 + i }))], NOW);
    const ids = messages[0]!.recipientIds;
    const other = await db.transaction();
    try {
      // More rows than a claim of 5 would look at as candidates (4 a row) are held elsewhere.
      await other('recipients').whereIn('id', ids.slice(0, 30)).forUpdate().select('id');
      const claimed = await queueRepo.claim(db, { owner: 'w2', now: NOW, leaseMs: 60_000, limit: 5 });
      expect(claimed.map((r) => r.id).sort((a, b) => a - b)).toStrictEqual(ids.slice(30, 35));
    } finally {
      await other.rollback();
    }
  });
});
