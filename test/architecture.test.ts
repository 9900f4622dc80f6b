import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOMS, PURE_ROOMS, QUERY_ROOM } from './architecture-rules.ts';

const SRC = join(import.meta.dirname, '..', 'src');

function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const files = sources().map((path) => ({ path: relative(SRC, path), text: readFileSync(path, 'utf8') }));

/** Lines matching `pattern` in files not `allowed`, as "file:line: text". */
function offenders(pattern: RegExp, allowed: (path: string) => boolean): string[] {
  return files
    .filter((f) => !allowed(f.path))
    .flatMap((f) => f.text.split('\n').flatMap((line, i) => (pattern.test(line) ? [`${f.path}:${i + 1}: ${line.trim()}`] : [])));
}

/** The rooms of src/ that `path`'s relative imports reach (a top-level file is its own room). */
function roomsImported(path: string, text: string): string[] {
  const dir = path.split('/').slice(0, -1);
  return [...text.matchAll(/from '(\.[^']+)'/g)].map((m) => {
    const parts = [...dir];
    for (const seg of m[1]!.split('/')) {
      if (seg === '..') parts.pop();
      else if (seg !== '.') parts.push(seg);
    }
    return parts[0]!;
  });
}

const roomOf = (path: string) => path.split('/')[0]!;
const imports = (pkg: string) => new RegExp(`from '${pkg}(/[^']*)?'`);

describe('import rules (docs/ARCHITECTURE.md)', () => {
  it.each(PACKAGE_ROOMS)('only the rooms allowed import $names', ({ pattern, rooms }) => {
    expect(offenders(imports(pattern), (p) => rooms.includes(roomOf(p)))).toStrictEqual([]);
  });

  it(`the pure rooms import nothing of ours outside themselves: ${PURE_ROOMS.join(', ')}`, () => {
    const wrong = files
      .filter((f) => PURE_ROOMS.includes(roomOf(f.path)))
      .flatMap((f) =>
        roomsImported(f.path, f.text)
          .filter((r) => r !== roomOf(f.path))
          .map((r) => `${f.path} imports ${r}/`),
      );
    expect(wrong).toStrictEqual([]);
  });

  it('the checks see what they look for', () => {
    expect(offenders(imports('fastify'), () => false).length).toBeGreaterThan(3);
    expect(roomsImported('delivery/pipeline.ts', "import { x } from '../store/db.ts';\nimport { y } from './mx.ts';")).toStrictEqual(['store', 'delivery']);
  });
});

describe('storage only through src/store/', () => {
  it('no code outside src/store/ builds a query or imports knex', () => {
    expect(files.length).toBeGreaterThan(100);
    // A query starts from a connection called as a function (db('table'), tx('table')) or raw SQL.
    const query = /\b(db|tx|trx|knex|conn)\(|\.raw\(|from 'knex'|\.(where|whereIn|whereRaw|whereExists|orderBy|forUpdate|returning|onConflict|increment)\(/;
    expect(offenders(query, (p) => roomOf(p) === QUERY_ROOM)).toStrictEqual([]);
  });

  it('the check sees a query where there is one', () => {
    const query = /\b(db|tx|trx|knex|conn)\(|\.raw\(/;
    expect(offenders(query, (p) => !p.startsWith('store/')).length).toBeGreaterThan(20);
  });
});

describe('database kinds only inside src/store/', () => {
  it('no code outside src/store/ asks which database it runs on; the composition root asks what it can do', () => {
    expect(offenders(/\bisPg\(/, (p) => p.startsWith('store/'))).toStrictEqual([]);
  });

  it('the check sees the question where it is asked', () => {
    expect(offenders(/\bisPg\(/, (p) => !p.startsWith('store/')).length).toBeGreaterThan(5);
  });
});

describe("docs/ARCHITECTURE.md's room table", () => {
  const doc = readFileSync(join(import.meta.dirname, '..', 'docs', 'ARCHITECTURE.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Rooms and what they may import'), doc.indexOf('## A message', 1));
  /** Each row: the rooms its first cell names (`name/`) and its last cell, what they may import. */
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const cells = line.slice(1, -1).split(' | ');
      return { rooms: [...cells[0]!.matchAll(/`([a-z]+)\/`/g)].map((m) => m[1]!), mayImport: cells.at(-1)!.trim() };
    });

  it('marks with ✔ exactly the rules the tests enforce', () => {
    expect(rows.length).toBeGreaterThan(10);
    const pure = rows.filter((r) => /^nothing of ours ✔/.test(r.mayImport)).flatMap((r) => r.rooms);
    expect(pure.sort()).toStrictEqual([...PURE_ROOMS].sort());

    const owners = rows.flatMap((r) =>
      [...r.mayImport.matchAll(/the only room (?:besides `([a-z]+)\/` )?that imports ([^✔]+?) ✔/g)].map((m) => ({
        names: m[2]!,
        rooms: [...r.rooms, ...(m[1] ? [m[1]] : [])].sort(),
      })),
    );
    expect(owners.sort((a, b) => a.names.localeCompare(b.names))).toStrictEqual(
      PACKAGE_ROOMS.map(({ names, rooms }) => ({ names, rooms: [...rooms].sort() })).sort((a, b) => a.names.localeCompare(b.names)),
    );

    const queries = rows.filter((r) => /the only one that builds a query ✔/.test(r.mayImport)).flatMap((r) => r.rooms);
    expect(queries).toStrictEqual([QUERY_ROOM]);

    const askers = rows.filter((r) => /the only one that asks which database it runs on[^✔]*✔/.test(r.mayImport)).flatMap((r) => r.rooms);
    expect(askers).toStrictEqual([QUERY_ROOM]);

    // Every ✔ of the table is one of the claims read above.
    const marks = rows.reduce((n, r) => n + (r.mayImport.match(/✔/g) ?? []).length, 0);
    const pureRows = rows.filter((r) => /^nothing of ours ✔/.test(r.mayImport)).length;
    expect(marks).toBe(pureRows + owners.length + queries.length + askers.length);
  });
});
