/**
 * A small seeded random source for fuzz suites: the same seed gives the same inputs, so a
 * failure reproduces with `MAILSVC_FUZZ_SEED=<seed>`.
 */
export interface Rng {
  seed: number;
  /** [0, 1) */
  next(): number;
  int(max: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
}

export function rng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    // mulberry32
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (max: number) => Math.floor(next() * max);
  return { seed, next, int, pick: (items) => items[int(items.length)], chance: (p) => next() < p };
}

export const fuzzSeed = (): number => Number(process.env.MAILSVC_FUZZ_SEED ?? 20261121);
export const fuzzRuns = (fallback: number): number => Number(process.env.MAILSVC_FUZZ_RUNS ?? fallback);

/** Strings chosen to break parsers: runs, quotes, brackets, escapes, control and odd Unicode. */
export function nastyString(r: Rng): string {
  const pieces = [
    () => ' '.repeat(r.int(5000)),
    () => '<'.repeat(r.int(3000)),
    () => '"'.repeat(r.int(100)),
    () => '\\'.repeat(r.int(100)),
    () => '\r\n'.repeat(r.int(50)),
    () => '\n'.repeat(r.int(5000)),
    () => '@'.repeat(r.int(50)),
    () => 'a'.repeat(r.int(2000)),
    () => '%',
    () => '%zz',
    () => '\u0000',
    () => '\u2028',
    () => '\uD800',
    () => '😀',
    () => 'Ä',
    () => '0x10',
    () => '1e308',
    () => '-1',
    () => '__proto__',
    () => 'constructor',
    () => 'u@dest.example',
    () => 'Name <u@dest.example>',
    () => '"a\\"b" <u@dest.example>',
    () => 'u@xn--80ak6aa92e.com',
    () => '2026-02-31',
    () => '9999-99-99T99:99:99Z',
    () => String(r.next()),
  ];
  let out = '';
  const n = 1 + r.int(4);
  for (let i = 0; i < n; i++) out += r.pick(pieces)();
  return out;
}

/** A random JSON value of any type, nested at most `depth` deep. */
export function randomValue(r: Rng, depth = 2): unknown {
  switch (r.int(depth > 0 ? 9 : 7)) {
    case 0:
      return null;
    case 1:
      return r.chance(0.5);
    case 2:
      return r.pick([0, -1, 1.5, 1e308, Number.MAX_SAFE_INTEGER + 2, 2147483648]);
    case 3:
      return '';
    case 4:
    case 5:
    case 6:
      return nastyString(r);
    case 7:
      return Array.from({ length: r.int(4) }, () => randomValue(r, depth - 1));
    default:
      return Object.fromEntries(Array.from({ length: r.int(3) }, () => [nastyString(r).slice(0, 20), randomValue(r, depth - 1)]));
  }
}
