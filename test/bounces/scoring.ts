// The five figures of the corpus README's "Scoring" section, computed from manifest.json and
// the parser's output. Shared by the corpus test and the benchmark/doc command.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseReport, toParseOutput, type ParseOutput } from '../../src/bounces/index.ts';
import { matchTextRule, withheldRules } from '../../src/bounces/classify.ts';
import { REASONS, TEXT_RULES, type Reason, type Term, type TextRule } from '../../src/bounces/rules.ts';

export const CORPUS = new URL('../fixtures/bounces/', import.meta.url);

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
  sha256: string;
}

export function loadManifest(): ManifestEntry[] {
  return JSON.parse(readFileSync(fileURLToPath(new URL('manifest.json', CORPUS)), 'utf8')) as ManifestEntry[];
}

export function readMessage(file: string): Buffer {
  return readFileSync(fileURLToPath(new URL(`messages/${file}`, CORPUS)));
}

const BLOCKED = new Set(
  'filtered rejected blocked badreputation spamdetected virusdetected policyviolation authfailure requireptr notcompliantrfc contenterror securityerror norelaying mesgtoobig exceedlimit syntaxerror failedstarttls'.split(
    ' ',
  ),
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
  /**
   * Failed recipients whose translated label is not `permanent`, and how many of them we class
   * permanent (hit = false suppressions; lower is better).
   */
  falseSuppression: Ratio;
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
  const f: Figures = { suppression: ratio(), class: ratio(), status: ratio(), recipients: ratio(), kind: ratio(), falseSuppression: ratio() };
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
      if (want !== 'permanent') {
        f.falseSuppression.total++;
        if (got?.bounce_type === 'permanent') {
          f.falseSuppression.hit++;
          misses.push({ file: m.file, family: m.family, figure: 'falseSuppression', detail: `${seen}; want ${want} (${label})` });
        }
      }
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
  const fs = f.falseSuppression;
  const falsePct = fs.total === 0 ? 0 : (100 * fs.hit) / fs.total;
  return `${name}: ${(['suppression', 'class', 'status', 'recipients', 'kind'] as const).map(one).join(', ')}, false suppression ${falsePct.toFixed(1)}% (${fs.hit}/${fs.total})`;
}

/**
 * Families whose evidence is withheld when family `family` is scored: its own, and those of any
 * file elsewhere that is byte-identical to one of its files (the corpus holds 18 such pairs under
 * an lhost- and an rhost- name), so that a sample is never its own evidence under another name.
 */
export function withheldFor(manifest: ManifestEntry[], family: string): Set<string> {
  const own = new Set(manifest.filter((m) => m.family === family).map((m) => m.sha256));
  return new Set([family, ...manifest.filter((m) => own.has(m.sha256)).map((m) => m.family)]);
}

/**
 * Leave-one-family-out: each family's files parsed with only the terms whose evidence is a
 * public source or another family (withheldRules in classify.ts), as if that family's
 * format had never been seen. Returns the outputs of every file, each from its own run.
 */
export async function parseLeaveOneFamilyOut(manifest: ManifestEntry[]): Promise<Map<string, ParseOutput>> {
  const outputs = new Map<string, ParseOutput>();
  for (const family of new Set(manifest.map((m) => m.family))) {
    const rules = withheldRules(withheldFor(manifest, family));
    for (const m of manifest.filter((x) => x.family === family)) outputs.set(m.file, toParseOutput(m.file, await parseReport(readMessage(m.file), rules)));
  }
  return outputs;
}

/** Figures for each family, from outputs of the whole corpus. */
export function scoreByFamily(manifest: ManifestEntry[], outputs: Map<string, ParseOutput>): Map<string, Figures> {
  const out = new Map<string, Figures>();
  for (const family of [...new Set(manifest.map((m) => m.family))].sort()) {
    out.set(
      family,
      score(
        manifest.filter((m) => m.family === family),
        outputs,
      ).figures,
    );
  }
  return out;
}

/** Our reason words and the corpus labels that mean the same. */
const SAME_MEANING: Partial<Record<Reason, readonly string[]>> = {
  user_unknown: ['userunknown'],
  host_unknown: ['hostunknown'],
  has_moved: ['hasmoved'],
  not_accept: ['notaccept'],
  mailbox_disabled: ['suspend'],
  mailbox_full: ['mailboxfull'],
  system_full: ['systemfull'],
  message_too_large: ['mesgtoobig', 'exceedlimit'],
  rate_limited: ['toomanyconn', 'speeding'],
  expired: ['expired'],
  network_error: ['networkerror'],
  system_error: ['systemerror'],
  mailer_error: ['mailererror'],
  syntax_error: ['syntaxerror'],
};

/** Does a label support a rule of this reason: same meaning, or (class 5) the same bounce type? */
export function labelSupports(reason: Reason, e: Expected): boolean {
  if (SAME_MEANING[reason]?.includes(e.reason)) return true;
  return e.status[0] === '5' && isFailure(e) && translate(e) === REASONS[reason];
}

/**
 * The evidence the corpus holds for each term: the families in which the term matches the
 * reply of a recipient whose label supports the term's rule. A term's declared `seen` must be
 * part of this (test/bounces/evidence.test.ts).
 */
export function corpusEvidence(manifest: ManifestEntry[], outputs: Map<string, ParseOutput>): Map<Term, Set<string>> {
  const seen = new Map<Term, Set<string>>();
  for (const rule of TEXT_RULES) for (const t of rule.terms) seen.set(t, new Set());
  for (const m of manifest) {
    const failures = m.expected.filter(isFailure);
    const out = outputs.get(m.file)!;
    failures.forEach((e, i) => {
      const got = out.recipients[i];
      if (!got) return;
      for (const rule of TEXT_RULES) {
        if (!labelSupports(rule.reason, e)) continue;
        for (const t of rule.terms) if (t.pattern.test(got.diagnostic)) seen.get(t)!.add(m.family);
      }
    });
  }
  return seen;
}

/** For each text rule, the corpus files in which it decided at least one recipient's reply. */
export async function ruleCoverage(manifest: ManifestEntry[]): Promise<Map<TextRule, Set<string>>> {
  const decided = new Map<TextRule, Set<string>>(TEXT_RULES.map((r) => [r, new Set<string>()]));
  for (const m of manifest) {
    const report = await parseReport(readMessage(m.file));
    // `diagnostic` is the folded text the classifier read for that recipient.
    for (const r of report.recipients) {
      const match = matchTextRule(r.diagnostic);
      if (match) decided.get(match.rule)?.add(m.file);
    }
  }
  return decided;
}
