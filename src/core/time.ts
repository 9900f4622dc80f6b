/** All timestamps leave the service as UTC ISO 8601 with milliseconds. */
export const iso = (ms: number): string => new Date(ms).toISOString();

export const isoOrNull = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : iso(ms));
