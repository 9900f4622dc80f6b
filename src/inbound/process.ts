import { createHash } from 'node:crypto';
import { emptyReport, type ParsedReport } from '../bounces/index.ts';
import type { Clock, Logger } from '../core/ports.ts';
import type { Metrics } from '../metrics/registry.ts';
import { recordBounce, recordComplaint, recordUnsubscribe } from '../messages/outcomes.ts';
import type { Db, Tx } from '../store/db.ts';
import { inboundRepo, type InboundOutcome } from '../store/inbound.ts';
import type { MessageRow } from '../store/messages.ts';
import type { TokenCodec } from '../tokens/index.ts';
import { correlate } from './correlate.ts';
import { rawToKeep, utcDayStart } from './raw-bounds.ts';
import { ReportBytes } from './receive.ts';
import type { ParseOutcome } from './parse-pool.ts';
import { planEffects, type Effect, type Plan } from './plan.ts';
import type { InboundTarget } from './policy.ts';

export interface InboundDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  verp: TokenCodec;
  hostname: string;
}

/** What the listener lets one sending IP make us store. */
export interface StoreBounds {
  /** `inbound.dailyStoreBytesPerIp`: raw bytes stored per sending IP per UTC day. */
  dailyStoreBytesPerIp: number;
}

/** For reports we make ourselves (the sandbox's feedback), which no stranger controls. */
const UNBOUNDED: StoreBounds = { dailyStoreBytesPerIp: Number.POSITIVE_INFINITY };

/** One accepted message for one accepted RCPT. */
export interface ReceivedReport {
  target: InboundTarget;
  mailFrom: string;
  remoteIp: string;
  helo: string | null;
  /** What was captured of the message (a Buffer for a report we made ourselves). */
  raw: ReportBytes | Buffer;
  /** SHA-256 of `raw` when the caller hashed it as it arrived. */
  sha256?: string;
  size: number;
  /** The message parsed once for all its RCPTs, or why it was not. */
  parse: ParseOutcome;
}

export interface HandledReport {
  id: number;
  kind: ParsedReport['kind'];
  outcome: InboundOutcome;
  summary: string;
  /** Raw bytes stored. */
  kept: number;
}

function sha256Of(raw: ReportBytes): string {
  const hash = createHash('sha256');
  for (const segment of raw.segments) hash.update(segment);
  return hash.digest('hex');
}

/** The mail's own User-Agent or X-Mailer (RFC 5322 header block only, first 64 KB). */
export function mailUserAgent(raw: Buffer): string | null {
  const head = raw.toString('latin1', 0, 65_536).replace(/\r\n?/g, '\n').split('\n\n')[0]!;
  const m = /^(?:User-Agent|X-Mailer)[ \t]*:[ \t]*(.*(?:\n[ \t].*)*)/im.exec(head);
  return m ? m[1]!.replace(/\s+/g, ' ').trim() || null : null;
}

const UNPARSED = {
  time_budget: 'not parsed: over the parse time budget (inbound.parseBudgetMs); stored with no effect',
  worker_failed: 'not parsed: the parser worker failed; stored with no effect',
  unreadable: 'not parsed: the parser could not read it; stored with no effect',
} as const;

async function apply(tx: Tx, e: Effect, message: MessageRow, at: number): Promise<void> {
  const target = { message, recipient: e.recipient, at };
  if (e.type === 'bounce') await recordBounce(tx, target, { bounceType: e.bounceType, final: e.final, ...(e.warning ? { warning: e.warning } : {}) }, e.provider);
  else if (e.type === 'complaint') await recordComplaint(tx, target, e.provider);
  else await recordUnsubscribe(tx, target, e.provider);
}

/**
 * The inbound pipeline for one report: parse, correlate, plan, then in one transaction skip a
 * retransmission, apply the effects (events, status, suppression) and store the report. The
 * SMTP 250 is given only after that commit, so a report is never acknowledged and lost.
 */
export async function handleReport(deps: InboundDeps, r: ReceivedReport, bounds: StoreBounds = UNBOUNDED): Promise<HandledReport> {
  const report = r.parse.parsed ?? emptyReport();
  const raw = Buffer.isBuffer(r.raw) ? ReportBytes.of(r.raw) : r.raw;
  const sha256 = r.sha256 ?? sha256Of(raw);
  const correlation = await correlate(deps.db, r.target, report, deps.verp);
  let plan: Plan = r.parse.unparsed
    ? { outcome: 'unparsed', effects: [], summary: UNPARSED[r.parse.unparsed] }
    : planEffects(report, correlation, {
        target: r.target,
        mailFrom: r.mailFrom,
        remoteIp: r.remoteIp,
        userAgent: mailUserAgent(raw.head(65_536)),
        hostname: deps.hostname,
      });
  const at = deps.clock.now();
  let keep = { bytes: raw.length, bound: null as ReturnType<typeof rawToKeep>['bound'] };
  const id = await deps.db.transaction(async (tx) => {
    // A sender that lost our 250 sends the same bytes again; its effects happened already.
    if (plan.effects.length > 0 && (await inboundRepo.appliedBefore(tx, sha256))) {
      plan = { outcome: 'duplicate', effects: [], summary: 'identical report already applied' };
    }
    for (const e of plan.effects) await apply(tx, e, correlation.message!, at);
    keep = rawToKeep({
      size: r.size,
      captured: raw.length,
      proven: correlation.proof !== null,
      storedToday: await inboundRepo.bytesStoredSince(tx, r.remoteIp, utcDayStart(at)),
      dailyCap: bounds.dailyStoreBytesPerIp,
    });
    return inboundRepo.insert(tx, {
      received_at: at,
      rcpt: r.target.address,
      mail_from: r.mailFrom,
      remote_ip: r.remoteIp,
      helo: r.helo ? r.helo.slice(0, 255) : null,
      size: r.size,
      truncated: keep.bytes < r.size,
      sha256,
      kind: report.kind,
      feedback_type: report.feedbackType ? report.feedbackType.slice(0, 32) : null,
      proof: correlation.proof,
      workspace_id: correlation.message?.workspace_id ?? null,
      email_id: correlation.message?.id ?? null,
      recipient_id: plan.effects[0]?.recipient.id ?? correlation.pinned?.id ?? null,
      outcome: plan.outcome,
      effect: plan.summary,
      raw: raw.head(keep.bytes),
      raw_bound: keep.bound,
    });
  });
  deps.metrics.inboundReports.inc({ kind: report.kind, outcome: plan.outcome });
  if (keep.bound === 'ip_daily_cap') deps.metrics.inboundNotStored.inc({ reason: keep.bound });
  else if (keep.bound) deps.metrics.inboundTruncated.inc({ reason: keep.bound });
  deps.log.info(
    {
      phase: 'report',
      report: id,
      rcpt: r.target.address,
      from: r.mailFrom,
      ip: r.remoteIp,
      size: r.size,
      kept: keep.bytes,
      raw_bound: keep.bound,
      kind: report.kind,
      feedback_type: report.feedbackType ? report.feedbackType.slice(0, 32) : null,
      proof: correlation.proof,
      email_id: correlation.message?.id ?? null,
      outcome: plan.outcome,
    },
    `REPORT id=${id} kind=${report.kind} outcome=${plan.outcome} ${plan.summary}`,
  );
  return { id, kind: report.kind, outcome: plan.outcome, summary: plan.summary, kept: keep.bytes };
}
