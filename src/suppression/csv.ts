import { Readable } from 'node:stream';
import { parse, type Options } from 'csv-parse';
import { stringify } from 'csv-stringify/sync';
import { invalid } from '../core/errors.ts';
import { iso } from '../core/time.ts';
import type { SuppressionRow } from '../store/suppressions.ts';
import { REASONS, checkAddress, checkStream } from './checks.ts';
import type { Stream, SuppressionReason } from '../store/suppressions.ts';

export const CSV_COLUMNS = ['address', 'stream', 'reason', 'email_id', 'created_at'] as const;

/** Rows as CSV lines; with `header`, the header row first. */
export function toCsv(rows: SuppressionRow[], header = true): string {
  return stringify(
    rows.map((r) => [r.address, r.stream, r.reason, r.email_id ?? '', iso(r.created_at)]),
    { header, columns: [...CSV_COLUMNS] },
  );
}

/**
 * An export's CSV, one string per page of entries, the header row first (also for an empty
 * list); `onRows` is told how many entries each page held.
 */
export async function* csvOfPages(pages: AsyncIterable<SuppressionRow[]>, onRows?: (n: number) => void): AsyncGenerator<string> {
  yield `${CSV_COLUMNS.join(',')}\n`;
  for await (const page of pages) {
    onRows?.(page.length);
    yield toCsv(page, false);
  }
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

/** One piece of a file: its good lines, its bad ones, and how many records it held. */
export interface CsvChunk {
  entries: ImportLine[];
  problems: ImportProblem[];
  /** Records after the header (good and bad lines). */
  records: number;
}

/**
 * The text is handed to the parser this many characters at a time: csv-parse works through what
 * it is given in one go, so a slice bounds the time one turn of the event loop spends parsing
 * (8 KB is about 350 lines).
 */
const SLICE_CHARS = 8 * 1024;

/** Lets the event loop run what is waiting (I/O, timers) before the next piece of bulk work. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Work done between two turns of the event loop, at most about this long: checking an address
 * costs some 10 µs, so a fixed count of lines would hold the loop longer on a slower machine.
 */
const TURN_MS = 4;

function* slices(text: string): Generator<string> {
  for (let i = 0; i < text.length; i += SLICE_CHARS) yield text.slice(i, i + SLICE_CHARS);
}

/**
 * The lines of a text that are not empty, the header's included: an upper bound on the records
 * after the header plus one (a quoted field may join lines; empty lines are skipped). One pass
 * of `indexOf`, a few milliseconds for 5 MB.
 */
export function countLines(text: string): number {
  let lines = 0;
  for (let start = 0; start < text.length;) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const length = end - start - (end > start && text.charCodeAt(end - 1) === 13 ? 1 : 0);
    if (length > 0) lines += 1;
    start = end + 1;
  }
  return lines;
}

/**
 * Reads a CSV with a header row naming at least `address` (and `stream` unless a default is
 * given), in chunks of about `chunkRecords` records, the event loop free between chunks. Every
 * bad line is reported by its line number and the rest are kept; a file without such a header
 * is refused as a whole (before the first chunk).
 */
export async function* readSuppressionCsv(text: string, opts: { defaultStream?: Stream; chunkRecords: number }): AsyncGenerator<CsvChunk> {
  let problems: ImportProblem[] = [];
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
  const parser = parse(options);
  const source = Readable.from(slices(text), { objectMode: false });
  source.on('error', (err) => parser.destroy(err));
  source.pipe(parser);
  const checkHeader = () => {
    const names = header as string[] | null;
    if (!names) throw invalid('the file is empty: expected a header row naming an `address` column');
    if (!names.includes('address')) throw invalid(`the header row must name an \`address\` column; it names ${names.map((n) => JSON.stringify(n)).join(', ')}`);
  };

  let entries: ImportLine[] = [];
  let checked = false;
  let turnStarted = performance.now();
  const take = (): CsvChunk => {
    const chunk = { entries, problems: problems.sort((a, b) => a.line - b.line), records: entries.length + problems.length };
    entries = [];
    problems = [];
    return chunk;
  };
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      if (!checked) {
        checkHeader();
        checked = true;
      }
      try {
        const stream = checkStream(record.stream || opts.defaultStream || '');
        const reason = (record.reason || 'manual') as SuppressionReason;
        if (!REASONS.includes(reason)) throw new Error(`reason must be one of ${REASONS.join(', ')}`);
        entries.push({ line: info.lines, address: checkAddress(record.address ?? ''), stream, reason });
      } catch (err) {
        problems.push({ line: info.lines, error: (err as Error).message });
      }
      if (entries.length + problems.length >= opts.chunkRecords) {
        yield take();
        await nextTurn();
        turnStarted = performance.now();
      } else if ((entries.length & 63) === 0 && performance.now() - turnStarted > TURN_MS) {
        await nextTurn();
        turnStarted = performance.now();
      }
    }
    if (!checked) checkHeader();
    if (entries.length + problems.length > 0) yield take();
  } finally {
    source.destroy();
    parser.destroy();
  }
}
