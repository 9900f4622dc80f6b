/** Tables for people, exactly one JSON document for scripts. */

export function printJson(doc: unknown): void {
  process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
}

export function printTable(rows: Record<string, unknown>[], columns: string[]): void {
  if (rows.length === 0) {
    process.stdout.write('(none)\n');
    return;
  }
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects are written as JSON before String sees them
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i])).join('  ').trimEnd();
  const out = [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))];
  process.stdout.write(`${out.join('\n')}\n`);
}

/** Either the JSON document or the human rendering. */
export function emit(json: boolean | undefined, doc: unknown, human: () => void): void {
  if (json) printJson(doc);
  else human();
}

export function printLines(lines: string[]): void {
  process.stdout.write(`${lines.join('\n')}\n`);
}
