/**
 * Sliding-window rate limits over per-second buckets. A window of W seconds at second `now`
 * covers seconds now-W+1 .. now, so 60 requests at 59.9 s and one at 60.1 s fall in the same
 * minute window (a fixed window would let 120 through across the boundary).
 */

export interface Bucket {
  second: number;
  count: number;
}

export interface WindowLimit {
  name: 'minute' | 'hour';
  seconds: number;
  limit: number;
}

export interface RateDecision {
  allowed: boolean;
  /** The window with the fewest remaining requests, for the RateLimit-* headers. */
  window: WindowLimit;
  remaining: number;
  /** Seconds until that window has room again. */
  reset: number;
  /** Whole seconds to wait, when refused. */
  retryAfter: number | null;
  /** The second the request was counted in, when allowed: where a refund gives it back. */
  second: number;
}

export const windowsFor = (limits: { perMinute: number; perHour: number }): WindowLimit[] => [
  { name: 'minute', seconds: 60, limit: limits.perMinute },
  { name: 'hour', seconds: 3600, limit: limits.perHour },
];

/** Seconds until the window has room for `count` more requests. */
function secondsUntilRoom(inWindow: Bucket[], window: WindowLimit, nowSecond: number, count: number): number {
  let used = inWindow.reduce((n, b) => n + b.count, 0);
  for (const b of inWindow) {
    if (used + count <= window.limit) break;
    used -= b.count;
    if (used + count <= window.limit) return b.second + window.seconds - nowSecond;
  }
  return 0;
}

/**
 * Decides one request given the buckets of the last hour (ascending by second). When allowed,
 * the figures already count this request. `count`: what the request weighs (a batch of messages
 * counts each of them), allowed only when all of it fits.
 */
export function decide(buckets: Bucket[], nowSecond: number, windows: WindowLimit[], count = 1): RateDecision {
  const states = windows.map((window) => {
    const inWindow = buckets.filter((b) => b.second > nowSecond - window.seconds);
    const used = inWindow.reduce((n, b) => n + b.count, 0);
    return { window, inWindow, used };
  });
  const refused = states.filter((s) => s.used + count > s.window.limit);
  if (refused.length > 0) {
    const waits = refused.map((s) => ({ s, wait: Math.max(1, secondsUntilRoom(s.inWindow, s.window, nowSecond, count)) }));
    const worst = waits.reduce((a, b) => (b.wait > a.wait ? b : a));
    return { allowed: false, window: worst.s.window, remaining: 0, reset: worst.wait, retryAfter: worst.wait, second: nowSecond };
  }
  const after = states.map((s) => {
    const oldest = s.inWindow[0]?.second ?? nowSecond;
    return { window: s.window, remaining: s.window.limit - s.used - count, reset: oldest + s.window.seconds - nowSecond };
  });
  const tightest = after.reduce((a, b) => (b.remaining < a.remaining ? b : a));
  return { allowed: true, window: tightest.window, remaining: tightest.remaining, reset: tightest.reset, retryAfter: null, second: nowSecond };
}
