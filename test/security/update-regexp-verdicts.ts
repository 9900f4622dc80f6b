// Re-checks every pattern of the untrusted-input parsers with recheck and rewrites
// test/security/regexp-verdicts.json. Run after changing patterns:
//   npx tsx test/security/update-regexp-verdicts.ts
// The automaton checker decides most patterns exactly; the ones it cannot (look-around, or too
// large in its time) get the fuzz checker's verdict.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { check } from 'recheck';
import { patternsToCheck } from './regexps.ts';

process.env.RECHECK_BACKEND = 'pure';
const FILE = join(import.meta.dirname, 'regexp-verdicts.json');

export interface Verdict {
  status: 'safe' | 'vulnerable' | 'unknown';
  checker: string;
  complexity: string | null;
  where: string;
  /** recheck's attack string, as an expression (`'a'.repeat(n) + 'b'`), for a vulnerable verdict. */
  attack?: string;
}

const verdicts: Record<string, Verdict> = {};
for (const [key, p] of await patternsToCheck()) {
  let r = await check(p.source, p.flags, { checker: 'automaton', timeout: 3000 });
  if (r.status === 'unknown') r = await check(p.source, p.flags, { checker: 'fuzz', timeout: 5000 });
  verdicts[key] = {
    status: r.status,
    checker: r.checker ?? 'none',
    complexity: r.status === 'unknown' ? null : r.complexity.type,
    where: p.where,
    ...(r.status === 'vulnerable' ? { attack: r.attack.pattern } : {}),
  };
  if (r.status !== 'safe') console.log(r.status, p.where, key.slice(0, 120));
}
const sorted = Object.fromEntries(Object.entries(verdicts).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(FILE, `${JSON.stringify(sorted, null, 1)}\n`);
console.log(`${Object.keys(sorted).length} patterns written to ${FILE}`);
