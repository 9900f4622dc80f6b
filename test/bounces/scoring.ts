// The five figures of the corpus README's "Scoring" section, computed from manifest.json and
// the parser's output. Shared by the corpus test and the benchmark/doc command.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseReport, toParseOutput, type ParseOutput } from '../../src/bounces/index.ts';
import { matchTextRule, useTextRules } from '../../src/bounces/classify.ts';
import { TEXT_RULES, type TextRule } from '../../src/bounces/rules.ts';

export const CORPUS = new URL('../../../shared/corpora/bounces/', import.meta.url);

export interface Expected {
  status: string;
  replycode: string;
  reason: string;
  hardbounce: boolean;
  feedbacktype?: string;
}
export interface ManifestEntry {
  file: string;
  expected: Expected[];
  family: string;
  group: string;
}

export function loadManifest(): ManifestEntry[] {
  return JSON.parse(readFileSync(fileURLToPath(new URL('manifest.json', CORPUS)), 'utf8')) as ManifestEntry[];
}

export function readMessage(file: string): Buffer {
  return readFileSync(fileURLToPath(new URL(`messages/${file}`, CORPUS)));
}

const BLOCKED = new Set(
  'filtered rejected blocked badreputation spamdetected virusdetected policyviolation authfailure requireptr notcompliantrfc contenterror securityerror norelaying mesgtoobig exceedlimit syntaxerror failedstarttls'.split(' '),
);

/** The README's translation of one label into the bounce_type mailsvc should report. */
export function translate(e: Expected): 'permanent' | 'transient' | 'blocked' {
  const cls = e.status[0];
  if (e.hardbounce || (e.reason === 'suspend' && cls === '5')) return 'permanent';
  if (cls === '5' && BLOCKED.has(e.reason)) return 'blocked';
  return 'transient';
}

const isFailure = (e: Expected) => !['feedback', 'vacation', 'delivered'].includes(e.reason);

export function statusAgrees(expected: string, got: string): boolean {
  if (/^\d\.0\.9\d\d$/.test(expected)) return got[0] === expected[0];
  return got === expected;
}

export interface Ratio {
  hit: number;
  total: number;
}
export interface Figures {
  suppression: Ratio;
  class: Ratio;
  status: Ratio;
  recipients: Ratio;
  kind: Ratio;
}
export interface Miss {
  file: string;
  family: string;
  figure: keyof Figures;
  detail: string;
}

const ratio = (): Ratio => ({ hit: 0, total: 0 });
export const pct = (r: Ratio) => (r.total === 0 ? 100 : (100 * r.hit) / r.total);

export function score(manifest: ManifestEntry[], outputs: Map<string, ParseOutput>): { figures: Figures; misses: Miss[] } {
  const f: Figures = { suppression: ratio(), class: ratio(), status: ratio(), recipients: ratio(), kind: ratio() };
  const misses: Miss[] = [];
  const count = (figure: keyof Figures, ok: boolean, m: ManifestEntry, detail: string) => {
    f[figure].total++;
    if (ok) f[figure].hit++;
    else misses.push({ file: m.file, family: m.family, figure, detail });
  };
  for (const m of manifest) {
    const out = outputs.get(m.file)!;
    const reasons = m.expected.map((e) => e.reason);
    if (reasons.includes('feedback')) {
      count('kind', out.kind === 'complaint', m, `kind ${out.kind}, want complaint`);
      continue;
    }
    if (reasons.includes('vacation')) {
      count('kind', out.kind === 'autoreply', m, `kind ${out.kind}, want autoreply`);
      continue;
    }
    if (m.expected.length === 0) {
      count('kind', out.kind === 'unknown' && out.recipients.length === 0, m, `kind ${out.kind} with ${out.recipients.length} recipients, want unknown`);
      continue;
    }
    const failures = m.expected.filter(isFailure);
    count('recipients', out.recipients.length === failures.length, m, `found ${out.recipients.length}, want ${failures.length}`);
    // Success entries (Action: delivered) must never be reported permanent.
    for (const e of m.expected.filter((x) => x.reason === 'delivered')) {
      count('suppression', !out.recipients.some((r) => r.bounce_type === 'permanent'), m, `delivered ${e.status} reported permanent`);
    }
    failures.forEach((e, i) => {
      const got = out.recipients[i];
      const want = translate(e);
      const label = `${e.status} ${e.replycode} ${e.reason}`;
      const seen = got ? `${got.status} ${got.smtp_code ?? ''} ${got.reason} ${got.bounce_type}` : 'missing';
      count('suppression', !!got && (got.bounce_type === 'permanent') === (want === 'permanent'), m, `${seen}; want ${want} (${label})`);
      count('class', !!got && got.bounce_type === want, m, `${seen}; want ${want} (${label})`);
      count('status', !!got && statusAgrees(e.status, got.status), m, `${seen}; want ${label}`);
    });
  }
  return { figures: f, misses };
}

export async function parseCorpus(manifest: ManifestEntry[]): Promise<Map<string, ParseOutput>> {
  const outputs = new Map<string, ParseOutput>();
  for (const m of manifest) outputs.set(m.file, toParseOutput(m.file, await parseReport(readMessage(m.file))));
  return outputs;
}

export function formatFigures(name: string, f: Figures): string {
  const one = (k: keyof Figures) => `${k} ${pct(f[k]).toFixed(1)}% (${f[k].hit}/${f[k].total})`;
  return `${name}: ${(['suppression', 'class', 'status', 'recipients', 'kind'] as const).map(one).join(', ')}`;
}

/** For each text rule, the corpus files in which it decided at least one recipient's reply. */
export async function ruleCoverage(manifest: ManifestEntry[]): Promise<Map<TextRule, Set<string>>> {
  const decided = new Map<TextRule, Set<string>>(TEXT_RULES.map((r) => [r, new Set<string>()]));
  for (const m of manifest) {
    const report = await parseReport(readMessage(m.file));
    // `diagnostic` is the folded text the classifier read for that recipient.
    for (const r of report.recipients) {
      const rule = matchTextRule(r.diagnostic);
      if (rule) decided.get(rule)?.add(m.file);
    }
  }
  return decided;
}

/** Hold-out halves: even- and odd-numbered files ("lhost-exim-02.eml" is even). */
export function half(manifest: ManifestEntry[], parity: 0 | 1): ManifestEntry[] {
  return manifest.filter((m) => Number(/-(\d+)\.eml$/.exec(m.file)?.[1] ?? 0) % 2 === parity);
}

/**
 * Scores one half with only the rules the other half would have motivated: rules that decide a
 * file of the other half, or no corpus file at all (written from published replies). A rule
 * that only this half's files need is left out, as if those files had never been seen.
 */
export async function holdOut(manifest: ManifestEntry[], parity: 0 | 1): Promise<Figures> {
  const coverage = await ruleCoverage(manifest);
  const other = new Set(half(manifest, parity === 0 ? 1 : 0).map((m) => m.file));
  const kept = TEXT_RULES.filter((r) => {
    const files = coverage.get(r)!;
    return files.size === 0 || [...files].some((f) => other.has(f));
  });
  const scored = half(manifest, parity);
  useTextRules(kept);
  try {
    return score(scored, await parseCorpus(scored)).figures;
  } finally {
    useTextRules();
  }
}
