/** Tables for people, exactly one JSON document for scripts. */

/** Tables and prose fit this many columns unless `--wide` is given. */
export const TABLE_WIDTH = 100;
const GAP = '  ';
const ELLIPSIS = '…';

let wide = false;

/** Set once from the global `--wide` option before a command runs. */
export function setWide(on: boolean): void {
  wide = on;
}

export function printJson(doc: unknown): void {
  process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
}

function elide(value: string, width: number): string {
  return value.length <= width ? value : `${value.slice(0, Math.max(0, width - 1))}${ELLIPSIS}`;
}

/**
 * Column widths that fit `limit`. The columns in `first` give way first (a DKIM key before the
 * record name one must type); then the widest columns are capped, none below its header's width.
 */
export function fitWidths(natural: number[], minimum: number[], limit: number, first: boolean[] = natural.map(() => false)): number[] {
  const room = limit - GAP.length * (natural.length - 1);
  const capped = (cap: number, which: (i: number) => boolean) => natural.map((w, i) => (which(i) ? Math.min(w, Math.max(cap, minimum[i])) : w));
  const sum = (ws: number[]) => ws.reduce((a, b) => a + b, 0);
  if (sum(natural) <= room) return natural;
  const fit = (which: (i: number) => boolean) => {
    let cap = Math.max(...natural);
    while (cap > 1 && sum(capped(cap, which)) > room) cap--;
    return capped(cap, which);
  };
  const firstOnly = fit((i) => first[i]);
  return sum(firstOnly) <= room ? firstOnly : fit(() => true);
}

export interface TableOptions {
  /** Columns to elide before any other (long values nobody types). */
  elideFirst?: string[];
  /** Prose columns: broken over several lines instead of elided. */
  wrap?: string[];
}

/** Text broken at spaces into lines of at most `width` (a longer word is cut). */
function breakLines(text: string, width: number): string[] {
  const out: string[] = [];
  let current = '';
  for (let word of text.split(' ')) {
    while (word.length > width) {
      if (current !== '') out.push(current);
      out.push(word.slice(0, width));
      word = word.slice(width);
      current = '';
    }
    if (current === '') current = word;
    else if (current.length + 1 + word.length <= width) current = `${current} ${word}`;
    else {
      out.push(current);
      current = word;
    }
  }
  out.push(current);
  return out;
}

/** Rows as aligned columns; values too long for the width end in an ellipsis (all of them in full with --wide). */
export function formatTable(rows: Record<string, unknown>[], columns: string[], options: TableOptions = {}, full = wide): string[] {
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects are written as JSON before String sees them
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const headers = columns.map((c) => c.toUpperCase());
  const body = rows.map((r) => columns.map((c) => cell(r[c])));
  const natural = columns.map((c, i) => Math.max(c.length, ...body.map((values) => values[i].length)));
  const first = columns.map((c) => options.elideFirst?.includes(c) ?? false);
  const widths = full
    ? natural
    : fitWidths(
        natural,
        headers.map((h) => h.length),
        TABLE_WIDTH,
        first,
      );
  const wrapped = columns.map((c) => options.wrap?.includes(c) ?? false);
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]))
      .join(GAP)
      .trimEnd();
  const rowLines = (values: string[]) => {
    const cells = values.map((v, i) => (wrapped[i] ? breakLines(v, widths[i]) : [elide(v, widths[i])]));
    const height = Math.max(...cells.map((c) => c.length));
    return Array.from({ length: height }, (_, k) => line(cells.map((c) => c[k] ?? '')));
  };
  return [line(headers), ...body.flatMap(rowLines)];
}

export function printTable(rows: Record<string, unknown>[], columns: string[], options: TableOptions = {}): void {
  if (rows.length === 0) {
    process.stdout.write('(none)\n');
    return;
  }
  process.stdout.write(`${formatTable(rows, columns, options).join('\n')}\n`);
}

/** Prose broken at spaces to fit the table width (kept on one line with --wide), each further line indented. */
export function wrap(text: string, indent: string, full = wide): string[] {
  if (full || text.length <= TABLE_WIDTH) return [text];
  const lead = /^ */.exec(text)![0];
  const [head, ...rest] = breakLines(text.slice(lead.length), TABLE_WIDTH - lead.length);
  return [lead + head, ...breakLines(rest.join(' '), TABLE_WIDTH - indent.length).map((l) => indent + l)];
}

/** Either the JSON document or the human rendering. */
export function emit(json: boolean | undefined, doc: unknown, human: () => void): void {
  if (json) printJson(doc);
  else human();
}

export function printLines(lines: string[]): void {
  process.stdout.write(`${lines.join('\n')}\n`);
}
