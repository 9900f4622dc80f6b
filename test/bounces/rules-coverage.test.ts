// How many corpus files each text rule decides (it is the first rule matching the reply the
// classifier read for a recipient). A rule that decides one file only may be fitted to that
// sample; it must show it is general: a `source` naming where the wording is published, or an
// example that is not that file's text.

import { beforeAll, describe, expect, it } from 'vitest';
import { fold } from '../../src/bounces/codes.ts';
import { TEXT_RULES, type TextRule } from '../../src/bounces/rules.ts';
import { loadManifest, readMessage, ruleCoverage } from './scoring.ts';

let coverage: Map<TextRule, Set<string>>;

beforeAll(async () => {
  coverage = await ruleCoverage(loadManifest());
});

describe('text rule coverage on the corpus', () => {
  it('reports how many files each rule decides', () => {
    const lines = TEXT_RULES.map((rule, i) => {
      const files = [...coverage.get(rule)!].sort();
      const list = files.length > 0 && files.length <= 2 ? `  ${files.join(' ')}` : '';
      return `  #${String(i).padStart(2)} ${rule.reason.padEnd(18)} ${String(files.length).padStart(3)} files${rule.source ? ' (published)' : ''}${list}`;
    });
    console.log(`text rules, corpus files decided:\n${lines.join('\n')}`);
    expect(lines.length).toBe(TEXT_RULES.length);
  });

  it('a rule that decides a single file is shown to be general', () => {
    const unproven: string[] = [];
    TEXT_RULES.forEach((rule, i) => {
      const files = [...coverage.get(rule)!];
      if (files.length !== 1 || rule.source) return;
      const text = fold(readMessage(files[0]!).toString('latin1'));
      if (rule.examples.every((e) => text.includes(fold(e)))) unproven.push(`#${i} ${rule.reason} (${files[0]})`);
    });
    expect(unproven).toEqual([]);
  });
});
