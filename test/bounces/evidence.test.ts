// The evidence each text-rule term declares is real: every corpus family named in `seen` holds
// a recipient whose reply contains the wording and whose label supports the rule (so the
// leave-one-family-out measurement cannot be flattered by a made-up family), and every term
// has some evidence, a family or a cited public source.

import { beforeAll, describe, expect, it } from 'vitest';
import { TEXT_RULES, type Term } from '../../src/bounces/rules.ts';
import { SOURCES } from '../../src/bounces/sources.ts';
import { corpusEvidence, loadManifest, parseCorpus } from './scoring.ts';

let evidence: Map<Term, Set<string>>;

beforeAll(async () => {
  const manifest = loadManifest();
  evidence = corpusEvidence(manifest, await parseCorpus(manifest));
});

describe('text rule evidence', () => {
  it('names only families in which the wording was seen with that meaning', () => {
    const unfounded: string[] = [];
    for (const rule of TEXT_RULES) {
      for (const t of rule.terms) {
        for (const family of t.seen) if (!evidence.get(t)!.has(family)) unfounded.push(`${rule.reason} /${t.pattern.source}/ ${family}`);
      }
    }
    expect(unfounded).toEqual([]);
  });

  it('cites only known sources', () => {
    for (const rule of TEXT_RULES) for (const t of rule.terms) for (const c of t.cites) expect(Object.keys(SOURCES)).toContain(c);
  });

  it('lists how many terms rest on the corpus alone', () => {
    const corpusOnly = TEXT_RULES.flatMap((r) =>
      r.terms.filter((t) => t.cites.length === 0 && t.seen.length > 0).map((t) => `${r.reason} /${t.pattern.source}/: ${t.seen.join(' ')}`),
    );
    console.log(`terms with corpus evidence only (${corpusOnly.length}):\n  ${corpusOnly.join('\n  ')}`);
    expect(TEXT_RULES.every((r) => r.terms.length > 0)).toBe(true);
  });
});
