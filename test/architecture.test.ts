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
  it('only api/ and roles/ import Fastify; only inbound/ (and submission/) import smtp-server; only store/ imports a database driver', () => {
    const outside = (...rooms: string[]) => (p: string) => rooms.includes(roomOf(p));
    expect(offenders(imports('(fastify|@fastify/[a-z-]+)'), outside('api', 'roles'))).toStrictEqual([]);
    expect(offenders(imports('smtp-server'), outside('inbound', 'submission'))).toStrictEqual([]);
    expect(offenders(imports('(knex|pg|better-sqlite3)'), outside('store'))).toStrictEqual([]);
  });

  it('the pure rooms import nothing of ours outside themselves: core, bounces, dkim, tokens', () => {
    const wrong = files
      .filter((f) => ['core', 'bounces', 'dkim', 'tokens'].includes(roomOf(f.path)))
      .flatMap((f) => roomsImported(f.path, f.text).filter((r) => r !== roomOf(f.path)).map((r) => `${f.path} imports ${r}/`));
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
    expect(offenders(query, (p) => p.startsWith('store/'))).toStrictEqual([]);
  });

  it('the check sees a query where there is one', () => {
    const query = /\b(db|tx|trx|knex|conn)\(|\.raw\(/;
    expect(offenders(query, (p) => !p.startsWith('store/')).length).toBeGreaterThan(20);
  });
});

describe('database kinds only inside src/store/', () => {
  // Still asking: accept.ts, whose two questions have store-level answers
  // (`GroupCommitter.runOwnIfCheaper`, `messagesRepo.drawIdsWithSuppressed`).

  it('no code outside src/store/ asks which database it runs on; the composition root asks what it can do', () => {
    expect(offenders(/\bisPg\(/, (p) => p.startsWith('store/'))).toStrictEqual([]);
  });

  it('the check sees the question where it is asked', () => {
    expect(offenders(/\bisPg\(/, (p) => !p.startsWith('store/')).length).toBeGreaterThan(5);
  });
});
