import type { Clock, Logger } from '../core/ports.ts';
import { iso } from '../core/time.ts';
import type { Db } from '../store/db.ts';
import { reputationRepo, type ReputationCount } from '../store/reputation.ts';
import type { Principal } from '../tenancy/principal.ts';

/** The complaint rate's window (SPEC §13): the last 7 days up to now. */
export const WINDOW_MS = 7 * 86_400_000;
/**
 * Google's published bulk-sender thresholds, in percent of delivered mail: keep the rate below
 * 0.1% and never reach 0.3% (support.google.com/a/answer/81126, "Email sender guidelines").
 */
export const LEVELS = { warning: 0.1, critical: 0.3 } as const;
/** After an operator's release is noticed, the rate holds the stream again only this much later. */
export const REARM_MS = 86_400_000;

export type Level = 'ok' | 'warning' | 'critical';

/** One workspace, sending domain and stream over the window. */
export interface RateFigure {
  delivered: number;
  complained: number;
  /** complained ÷ delivered in percent, to four decimals; null when nothing was delivered. */
  rate: number | null;
  level: Level;
}

/** Percent to four decimals; multiplied first so that 2 of 1000 is exactly 0.2. */
export function ratePercent(complained: number, delivered: number): number | null {
  return delivered === 0 ? null : Math.round((complained * 100 * 10_000) / delivered) / 10_000;
}

export function levelOf(rate: number | null): Level {
  if (rate === null) return 'ok';
  return rate >= LEVELS.critical ? 'critical' : rate >= LEVELS.warning ? 'warning' : 'ok';
}

const figure = (delivered: number, complained: number): RateFigure => {
  const rate = ratePercent(complained, delivered);
  return { delivered, complained, rate, level: levelOf(rate) };
};

export interface ComplianceConfig {
  /** Percent; null: never hold. */
  pauseBroadcastAt: number | null;
  pauseMinDelivered: number;
}

/**
 * Complaint rates (SPEC §13, docs/COMPLIANCE.md): complaints ÷ delivered over the last 7 days
 * per workspace, sending domain and stream, and the broadcast hold at `pauseBroadcastAt`.
 */
export class ReputationService {
  constructor(private readonly deps: { db: Db; clock: Clock; log: Logger; compliance: ComplianceConfig }) {}

  /** `GET /stats/reputation`: the key's workspace (a domain-scoped key: its domain) per stream and per domain and stream. */
  async forKey(principal: Principal) {
    const now = this.deps.clock.now();
    const { db } = this.deps;
    const counts = await reputationRepo.counts(db, now - WINDOW_MS, now, { workspaceId: principal.workspaceId, domain: principal.domain });
    const held = await reputationRepo.heldBroadcastDomains(db, principal.workspaceId);
    const streams = ['transactional', 'broadcast'].map((stream) => {
      const rows = counts.filter((c) => c.stream === stream);
      return { stream, ...figure(sum(rows, 'delivered'), sum(rows, 'complained')) };
    });
    const domains = counts.map((c) => ({
      domain: c.domain,
      stream: c.stream,
      ...figure(c.delivered, c.complained),
      ...(c.stream === 'broadcast' ? { held: held.has(c.domain) } : {}),
    }));
    return {
      from: iso(now - WINDOW_MS),
      to: iso(now),
      thresholds: { warning: LEVELS.warning, critical: LEVELS.critical, pause_broadcast_at: this.deps.compliance.pauseBroadcastAt },
      workspace: { ...figure(sum(counts, 'delivered'), sum(counts, 'complained')), streams },
      domains,
    };
  }

  /**
   * The periodic check (the delivery role runs it once a minute; any number of processes may):
   * every workspace's figures for the gauges, and the broadcast hold of each sending domain
   * whose broadcast rate reached `pauseBroadcastAt` over at least `pauseMinDelivered`
   * delivered recipients. Returns the figures and the domains this call held.
   */
  async check(): Promise<{ figures: (ReputationCount & RateFigure)[]; held: { workspaceId: number; domain: string }[] }> {
    const { db, log, compliance } = this.deps;
    const now = this.deps.clock.now();
    const counts = await reputationRepo.counts(db, now - WINDOW_MS, now);
    const figures = counts.map((c) => ({ ...c, ...figure(c.delivered, c.complained) }));
    const held: { workspaceId: number; domain: string }[] = [];
    const at = compliance.pauseBroadcastAt;
    if (at === null) return { figures, held };
    await reputationRepo.noteReleases(db, now);
    for (const f of figures) {
      if (f.stream !== 'broadcast' || f.rate === null || f.rate < at || f.delivered < compliance.pauseMinDelivered) continue;
      const reason = `complaint rate ${f.rate}% over 7 days (${f.complained} of ${f.delivered} delivered) reached compliance.pauseBroadcastAt ${at}%`;
      if (!(await reputationRepo.pause(db, { workspaceId: f.workspaceId, domain: f.domain, now, rearmMs: REARM_MS, reason }))) continue;
      held.push({ workspaceId: f.workspaceId, domain: f.domain });
      log.warn(
        { phase: 'reputation', workspace: f.workspaceName, domain: f.domain, stream: 'broadcast', rate: f.rate, complained: f.complained, delivered: f.delivered },
        `broadcast mail from ${f.domain} is held: ${reason}; release it with: mailsvc queue release --workspace ${f.workspaceName} --sending-domain ${f.domain} --stream broadcast`,
      );
    }
    return { figures, held };
  }
}

const sum = (rows: ReputationCount[], k: 'delivered' | 'complained') => rows.reduce((n, r) => n + r[k], 0);
