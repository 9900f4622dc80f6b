/**
 * A group's per-minute limit as pacing: messages start at least `interval` apart, with no burst,
 * so no window of a minute ever holds more than the limit, whatever process sends them. The
 * state is the earliest time the next message may start (`nextSlot`); a request takes slots up
 * to `horizon` ahead, so a worker waits a moment for a slot rather than claim mail it cannot send.
 */

/**
 * A minute and a second: `perMinute` slots spread over it, so the first and the last message of
 * any minute's worth are a second further apart than a minute. A message reaches the receiver a
 * little after its slot, by however long its commands take; that second absorbs the difference,
 * so a receiver counting any sliding minute never sees more than `perMinute` (at the cost of
 * 1.6% of the rate).
 */
const SPREAD_MS = 61_000;

/** Milliseconds between two messages of a group allowed `perMinute`, doubled while throttled. */
export function pacingInterval(perMinute: number, throttled: boolean): number {
  // Not rounded to a whole millisecond: at 4,200 a minute that alone would cost 3% of the rate.
  return (SPREAD_MS / perMinute) * (throttled ? 2 : 1);
}

/** The slots granted to `wanted` messages: the first at `start`, each `interval` later; `granted` may be fewer. */
export interface Grant {
  start: number;
  granted: number;
  /** The group's next free slot after this grant. */
  nextSlot: number;
}

/** Takes up to `wanted` slots starting no earlier than `now`, none later than `now + horizon`. */
export function takeSlots(nextSlot: number, now: number, interval: number, horizon: number, wanted: number): Grant {
  const start = Math.max(nextSlot, now);
  const fit = start > now + horizon ? 0 : Math.floor((now + horizon - start) / interval) + 1;
  const granted = Math.max(0, Math.min(wanted, fit));
  return { start, granted, nextSlot: start + granted * interval };
}
