import type { RawBound } from '../store/inbound.ts';

/**
 * How much of a report's raw bytes is stored. Anyone can mail `postmaster@` or `fbl@`, so what
 * a stranger can make us keep is bounded twice: a report without proof that it is about our
 * mail keeps its first 256 KB (what identifies a report, its headers and notice, comes first),
 * and the bytes stored for one sending IP per UTC day are capped. Past the cap the report is
 * still answered, parsed and acted on when proven; only its raw bytes are dropped.
 */
export const UNPROVEN_KEEP_BYTES = 256 * 1024;

export interface KeepInput {
  /** Bytes that arrived. */
  size: number;
  /** Bytes captured (at most `inbound.maxSize`). */
  captured: number;
  proven: boolean;
  /** Raw bytes already stored today for the sending IP. */
  storedToday: number;
  /** `inbound.dailyStoreBytesPerIp`. */
  dailyCap: number;
}

export interface Keep {
  bytes: number;
  bound: RawBound | null;
}

export function rawToKeep(i: KeepInput): Keep {
  let keep: Keep = { bytes: i.captured, bound: i.captured < i.size ? 'max_size' : null };
  if (!i.proven && keep.bytes > UNPROVEN_KEEP_BYTES) keep = { bytes: UNPROVEN_KEEP_BYTES, bound: 'unproven' };
  if (keep.bytes > 0 && i.storedToday + keep.bytes > i.dailyCap) keep = { bytes: 0, bound: 'ip_daily_cap' };
  return keep;
}

const DAY_MS = 86_400_000;

/** Start of the UTC day of `ms`: the per-IP cap starts again at midnight UTC. */
export const utcDayStart = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;
