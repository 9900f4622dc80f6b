/**
 * A group's per-minute limit as pacing: messages start at least `interval` apart, with no burst,
 * so no window of a minute ever holds more than the limit, whatever process sends them. The
 * state is the earliest time the next message may start (`nextSlot`); a request takes slots up
 * to `horizon` ahead, so a worker waits a moment for a slot rather than claim mail it cannot send.
 */

/** Milliseconds between two messages of a group allowed `perMinute`, halved while throttled. */
export function pacingInterval(perMinute: number, throttled: boolean): number {
  return Math.ceil(60_000 / perMinute) * (throttled ? 2 : 1);
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
