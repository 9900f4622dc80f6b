import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');

function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const files = sources().map((path) => ({ path: relative(SRC, path), text: readFileSync(path, 'utf8') }));

/** Lines of files outside `room` (a folder of src/) that match `pattern`, as "file:line: text". */
function offenders(pattern: RegExp, allowed: (path: string) => boolean): string[] {
  return files
    .filter((f) => !allowed(f.path))
    .flatMap((f) => f.text.split('\n').flatMap((line, i) => (pattern.test(line) ? [`${f.path}:${i + 1}: ${line.trim()}`] : [])));
}

describe('storage only through src/store/', () => {
  it('no code outside src/store/ builds a query or imports knex', () => {
    expect(files.length).toBeGreaterThan(100);
    // A query starts from a connection called as a function (db('table'), tx('table')) or raw SQL.
    const query = /\b(db|tx|trx|knex|conn)\(|\.raw\(|from 'knex'|\.(where|whereIn|whereRaw|whereExists|orderBy|forUpdate|returning|onConflict|increment)\(/;
    expect(offenders(query, (p) => p.startsWith('store/'))).toStrictEqual([]);
  });

  it('the check sees a query where there is one', () => {
    const query = /\b(db|tx|trx|knex|conn)\(|\.raw\(/;
    expect(offenders(query, (p) => !p.startsWith('store/')).length).toBeGreaterThan(20);
  });
});
