import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { check } from 'recheck';
import { describe, expect, it } from 'vitest';
import { REVIEWED } from './regexp-reviews.ts';
import { patternsToCheck, UNTRUSTED_INPUT_SOURCES } from './regexps.ts';

// recheck's pure-JavaScript backend: no Java or native binary needed on a CI machine.
process.env.RECHECK_BACKEND = 'pure';

interface Verdict {
  status: 'safe' | 'vulnerable' | 'unknown';
  checker: string;
  complexity: string | null;
  where: string;
  attack?: string;
}

// recheck's fuzz checker runs patterns in a backtracking machine of its own, without V8's
// optimisations, and can call a pattern vulnerable that V8 matches in linear time. Such a
// pattern passes only when it was reviewed and V8 matches recheck's own attack string quickly:
// a real quadratic blow-up at that size takes seconds to minutes.
const ATTACK_BUDGET_MS = 250;

/** recheck's attack as it writes it, e.g. `'a'.repeat(12903) + '\n'`, built without eval. */
function attackString(expression: string): string {
  return expression
    .split(' + ')
    .map((term) => {
      const m = /^'((?:[^'\\]|\\.)*)'(?:\.repeat\((\d+)\))?$/.exec(term);
      if (!m) throw new Error(`unexpected attack term ${term}`);
      const escaped = m[1]!
        .replace(/\\'/g, "'")
        .replace(/"/g, '\\"')
        .replace(/\\x([0-9a-fA-F]{2})/g, '\\u00$1');
      const text = JSON.parse(`"${escaped}"`) as string;
      return text.repeat(Number(m[2] ?? 1));
    })
    .join('');
}

function matchMs(p: { source: string; flags: string }, input: string): number {
  const re = new RegExp(p.source, p.flags);
  const t0 = performance.now();
  re.test(input);
  return performance.now() - t0;
}

/**
 * recheck needs seconds per pattern, so its verdicts on the current patterns are kept in
 * regexp-verdicts.json (written by update-regexp-verdicts.ts). A pattern not in the file (new
 * or edited) is checked here and now, and must come out safe.
 */
const VERDICTS: Record<string, Verdict> = JSON.parse(readFileSync(join(import.meta.dirname, 'regexp-verdicts.json'), 'utf8'));

describe(`regular expressions over untrusted input (${UNTRUSTED_INPUT_SOURCES.join(', ')})`, () => {
  it('are each found safe by recheck, or reviewed by hand where it cannot decide; none is vulnerable', { timeout: 120_000 }, async () => {
    const patterns = await patternsToCheck();
    expect(patterns.size).toBeGreaterThan(100);
    const problems: string[] = [];
    for (const [key, p] of patterns) {
      const verdict = VERDICTS[key];
      if (!verdict) {
        const r = await check(p.source, p.flags, { timeout: 10_000 });
        if (r.status === 'vulnerable') problems.push(`${p.where} ${key}: vulnerable, e.g. ${r.attack.pattern}`);
        else if (r.status === 'unknown')
          problems.push(`${p.where} ${key}: recheck could not decide (${r.error.kind}); rewrite it, or review it in regexp-reviews.ts and run update-regexp-verdicts.ts`);
        continue;
      }
      if (verdict.status === 'vulnerable') {
        const ms = REVIEWED[p.source] && verdict.attack ? matchMs(p, attackString(verdict.attack)) : Infinity;
        if (ms >= ATTACK_BUDGET_MS) problems.push(`${p.where} ${key}: vulnerable (${verdict.complexity}), e.g. ${verdict.attack}`);
      }
      if (verdict.status === 'unknown' && !REVIEWED[p.source]) problems.push(`${p.where} ${key}: undecided by recheck and not reviewed`);
    }
    expect(problems).toEqual([]);
  });

  it('keeps the verdict file to the patterns in the code (run update-regexp-verdicts.ts after editing them)', async () => {
    const patterns = await patternsToCheck();
    expect(Object.keys(VERDICTS).filter((k) => !patterns.has(k))).toEqual([]);
  });
});
