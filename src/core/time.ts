/** All timestamps leave the service as UTC ISO 8601 with milliseconds. */
export const iso = (ms: number): string => new Date(ms).toISOString();

export const isoOrNull = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : iso(ms));

const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|([+-])(\d{2}):?(\d{2}))$/i;

/**
 * An ISO 8601 timestamp with a zone offset, in ms; null when it is not one or names a moment
 * that does not exist (February 30th, hour 24): `Date.parse` would roll those into the next
 * day or month rather than refuse them.
 */
export function parseIsoWithZone(value: string): number | null {
  const m = ISO.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute, second, offHours, offMinutes] = [1, 2, 3, 4, 5, 6, 8, 9].map((i) => Number(m[i] ?? 0));
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCFullYear() !== year || calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) return null;
  if (hour > 23 || minute > 59 || second > 59 || offHours > 23 || offMinutes > 59) return null;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : at;
}
