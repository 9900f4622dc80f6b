// How many corpus files each text rule decides (it is the first rule matching the reply the
// classifier read for a recipient), printed for whoever edits the rules.

import { beforeAll, describe, expect, it } from 'vitest';
import { TEXT_RULES, type TextRule } from '../../src/bounces/rules.ts';
import { loadManifest, ruleCoverage } from './scoring.ts';

let coverage: Map<TextRule, Set<string>>;

beforeAll(async () => {
  coverage = await ruleCoverage(loadManifest());
});

describe('text rule coverage on the corpus', () => {
  it('reports how many files each rule decides', () => {
    const lines = TEXT_RULES.map((rule, i) => {
      const files = [...coverage.get(rule)!].sort();
      const list = files.length > 0 && files.length <= 2 ? `  ${files.join(' ')}` : '';
      const cited = rule.terms.filter((t) => t.cites.length > 0).length;
      return `  #${String(i).padStart(2)} ${rule.reason.padEnd(18)} ${String(files.length).padStart(3)} files, ${cited}/${rule.terms.length} terms cited${list}`;
    });
    console.log(`text rules, corpus files decided:\n${lines.join('\n')}`);
    expect(lines.length).toBe(TEXT_RULES.length);
    expect([...coverage.values()].some((files) => files.size > 0)).toBe(true);
  });
});
