import { Batcher } from '../core/batcher.ts';
import { takeSlots, type Grant } from '../shaping/pacing.ts';
import type { Db } from '../store/db.ts';
import { shapingRepo, type SlotRequest } from '../store/shaping.ts';

/** Hands out a group's pacing slots: one message every `interval` ms, at most `horizon` ahead. */
export interface Pacer {
  take(group: string, interval: number, now: number, horizon: number): Promise<Omit<Grant, 'nextSlot'>>;
}

/** One process on its own database (SQLite): the slots live in memory. */
export function memoryPacer(): Pacer {
  const next = new Map<string, number>();
  return {
    take(group, interval, now, horizon) {
      const grant = takeSlots(next.get(group) ?? 0, now, interval, horizon, 1);
      if (grant.granted > 0) next.set(group, grant.nextSlot);
      // Forget groups whose slots have passed, so thousands of destinations cost nothing idle.
      if (next.size > 10_000) for (const [name, slot] of next) if (slot < now) next.delete(name);
      return Promise.resolve(grant);
    },
  };
}

interface Want {
  group: string;
  interval: number;
  now: number;
  horizon: number;
}

/**
 * Several processes on PostgreSQL: every slot is taken from the group's row, so the per-minute
 * limit holds across all of them. The requests of one turn of the event loop (or that arrive
 * while a statement is in flight) go in one statement, a group's requests as one.
 */
export function sharedPacer(db: Db): Pacer {
  const batcher = new Batcher<Want, Omit<Grant, 'nextSlot'>>({
    name: 'the pacer',
    maxInFlight: 1,
    start: 'immediate',
    write: async (batch) => {
      const wants = batch.take();
      const now = Math.max(...wants.map((w) => w.now));
      const horizon = Math.min(...wants.map((w) => w.horizon));
      const byGroup = new Map<string, { request: SlotRequest; indexes: number[] }>();
      wants.forEach((w, i) => {
        const entry = byGroup.get(w.group) ?? { request: { group: w.group, wanted: 0, interval: w.interval }, indexes: [] };
        entry.request.wanted++;
        entry.request.interval = Math.max(entry.request.interval, w.interval);
        entry.indexes.push(i);
        byGroup.set(w.group, entry);
      });
      const entries = [...byGroup.values()];
      const grants = await shapingRepo.takeSlots(
        db,
        entries.map((e) => e.request),
        now,
        horizon,
      );
      const out = new Array<Omit<Grant, 'nextSlot'>>(wants.length);
      entries.forEach((e, k) => {
        const { start, granted } = grants[k]!;
        e.indexes.forEach((index, j) => {
          out[index] = j < granted ? { start: start + j * e.request.interval, granted: 1 } : { start: start + granted * e.request.interval, granted: 0 };
        });
      });
      return out;
    },
  });
  return { take: (group, interval, now, horizon) => batcher.add({ group, interval, now, horizon }) };
}
