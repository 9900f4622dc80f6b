import { parse, type Options } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { invalid } from '../core/errors.ts';
import { iso } from '../core/time.ts';
import type { SuppressionRow } from '../store/suppressions.ts';
import { REASONS, checkAddress, checkStream } from './service.ts';
import type { Stream, SuppressionReason } from '../store/suppressions.ts';

export const CSV_COLUMNS = ['address', 'stream', 'reason', 'email_id', 'created_at'] as const;

export function toCsv(rows: SuppressionRow[]): string {
  return stringify(
    rows.map((r) => [r.address, r.stream, r.reason, r.email_id ?? '', iso(r.created_at)]),
    { header: true, columns: [...CSV_COLUMNS] },
  );
}

export interface ImportLine {
  line: number;
  address: string;
  stream: Stream;
  reason: SuppressionReason;
}

export interface ImportProblem {
  line: number;
  error: string;
}

/**
 * Reads a CSV with a header row naming at least `address` (and `stream` unless a default is
 * given). Every bad line is reported by its line number and the rest are kept; a file without
 * such a header is refused as a whole.
 */
export function readSuppressionCsv(text: string, defaultStream?: Stream): { entries: ImportLine[]; problems: ImportProblem[] } {
  const problems: ImportProblem[] = [];
  let header: string[] | null = null;
  // `on_skip` exists in csv-parse 5 but is missing from its type definitions.
  const options: Options & { on_skip: (err: (Error & { lines?: number }) | undefined) => void } = {
    columns: (names: string[]) => (header = names.map((h) => h.trim().toLowerCase())),
    skip_empty_lines: true,
    trim: true,
    bom: true,
    info: true,
    relax_column_count: true,
    skip_records_with_error: true,
    on_skip: (err) => {
      if (err) problems.push({ line: err.lines ?? 0, error: err.message.replace(/^Invalid Record Length: /, '') });
    },
  };
  const records = parse(text, options) as { record: Record<string, string>; info: { lines: number } }[];

  const names = header as string[] | null;
  if (!names) throw invalid('the file is empty: expected a header row naming an `address` column');
  if (!names.includes('address')) throw invalid(`the header row must name an \`address\` column; it names ${names.map((n) => JSON.stringify(n)).join(', ')}`);
  const entries: ImportLine[] = [];
  for (const { record, info } of records) {
    try {
      const stream = checkStream(record.stream || defaultStream || '');
      const reason = (record.reason || 'manual') as SuppressionReason;
      if (!REASONS.includes(reason)) throw new Error(`reason must be one of ${REASONS.join(', ')}`);
      entries.push({ line: info.lines, address: checkAddress(record.address ?? ''), stream, reason });
    } catch (err) {
      problems.push({ line: info.lines, error: (err as Error).message });
    }
  }
  problems.sort((a, b) => a.line - b.line);
  return { entries, problems };
}
