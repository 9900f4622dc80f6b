// Building blocks of the text rules: one wording is a term `[pattern, cites, seen]`, written on
// one line so that its evidence sits beside it (see Term in reasons.ts).

import type { Reason, Term, TextRule } from './reasons.ts';
import { SOURCES, type SourceKey } from './sources.ts';

/** `[/wording/, 'cited sources', 'corpus families']`, both lists space-separated, may be empty. */
export type TermRow = readonly [RegExp, string, string];

const words = (s: string) => s.split(' ').filter((w) => w !== '');

function term([pattern, cites, seen]: TermRow): Term {
  const keys = words(cites);
  for (const k of keys) if (!(k in SOURCES)) throw new Error(`unknown source ${k} for ${pattern}`);
  return { pattern: new RegExp(pattern.source, 'i'), cites: keys as SourceKey[], seen: words(seen) };
}

/** One alternation of the terms' patterns, tried as a whole (linear: no term nests another). */
export function joinTerms(terms: readonly Term[]): RegExp | null {
  if (terms.length === 0) return null;
  return new RegExp(terms.map((t) => `(?:${t.pattern.source})`).join('|'), 'i');
}

export function rule(r: { signal: string; reason: Reason; examples: readonly [string, ...string[]]; terms: readonly TermRow[] }): TextRule {
  const terms = r.terms.map(term);
  return { signal: r.signal, reason: r.reason, examples: r.examples, terms, pattern: joinTerms(terms)! };
}
