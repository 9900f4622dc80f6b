import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** Where text from strangers is matched: every pattern here must be linear. */
export const UNTRUSTED_INPUT_SOURCES = ['src/bounces', 'src/inbound', 'src/messages/address.ts'];

export interface FoundPattern {
  /** file:line, or module:export path for a pattern built at run time. */
  where: string;
  source: string;
  flags: string;
}

const ROOT = join(import.meta.dirname, '../..');

function sourceFiles(): string[] {
  return UNTRUSTED_INPUT_SOURCES.flatMap((entry) =>
    entry.endsWith('.ts')
      ? [join(ROOT, entry)]
      : readdirSync(join(ROOT, entry), { recursive: true })
          .map(String)
          .filter((f) => f.endsWith('.ts'))
          .map((f) => join(ROOT, entry, f)),
  );
}

/** Every regular expression literal in the files, found by the TypeScript parser (not a pattern). */
export function regexpLiterals(): FoundPattern[] {
  const found: FoundPattern[] = [];
  for (const file of sourceFiles()) {
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
    const visit = (node: ts.Node) => {
      if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
        const text = node.getText(sf);
        const end = text.lastIndexOf('/');
        const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
        found.push({ where: `${relative(ROOT, file)}:${line}`, source: text.slice(1, end), flags: text.slice(end + 1) });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return found;
}

/** `/source/flags`, the key of a pattern in the verdict file. */
export const patternKey = (p: { source: string; flags: string }): string => `/${p.source}/${p.flags}`;

/** Every pattern once, by key, with the first place it was found; g and y do not change matching cost. */
export async function patternsToCheck(): Promise<Map<string, FoundPattern>> {
  const out = new Map<string, FoundPattern>();
  const joined = await joinedRulePatterns();
  for (const p of [...regexpLiterals(), ...(await exportedRegExps())]) {
    const q = { ...p, flags: p.flags.replace(/[gy]/g, '') };
    if (joined.has(patternKey(q))) continue;
    if (!out.has(patternKey(q))) out.set(patternKey(q), q);
  }
  return out;
}

/**
 * A text rule's pattern is its terms joined as a top-level alternation, which tries each term at
 * each position and so costs their sum: it is linear when every term is, and the terms are
 * checked one by one. Checking the long joins as well would only time the checker out.
 */
async function joinedRulePatterns(): Promise<Set<string>> {
  const { TEXT_RULES } = await import('../../src/bounces/text-rules.ts');
  const { joinTerms } = await import('../../src/bounces/rule-data.ts');
  const keys = new Set<string>();
  for (const rule of TEXT_RULES) {
    const join = joinTerms(rule.terms);
    if (join && join.source === rule.pattern.source) keys.add(patternKey({ source: join.source, flags: join.flags }));
  }
  return keys;
}

/**
 * Patterns built at run time (`new RegExp(...)` from pieces) that the modules export, directly or
 * inside exported tables: found by walking the exported values.
 */
export async function exportedRegExps(): Promise<FoundPattern[]> {
  const found: FoundPattern[] = [];
  const seen = new Set<unknown>();
  const walk = (value: unknown, where: string, depth: number) => {
    if (value instanceof RegExp) {
      found.push({ where, source: value.source, flags: value.flags });
      return;
    }
    if (depth > 5 || value === null || typeof value !== 'object' || seen.has(value)) return;
    seen.add(value);
    for (const [key, v] of Object.entries(value)) walk(v, `${where}.${key}`, depth + 1);
  };
  for (const file of sourceFiles()) {
    if (file.endsWith('-worker.ts')) continue;
    const module = (await import(file)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) walk(value, `${relative(ROOT, file)}:${name}`, 0);
  }
  return found;
}
