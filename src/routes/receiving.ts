import type { Clock } from '../core/ports.ts';
import type { Conn } from '../store/db.ts';
import { routesRepo } from '../store/routes.ts';
import { parseMatch, type MatchableRoute } from './match.ts';

/** How long a snapshot is used; a route added from the CLI takes mail within this time. */
export const RECEIVING_CACHE_MS = 5_000;

/** A route as the inbound MX sees it: its match, and whose it is. */
export type ReceivingRoute = MatchableRoute & { workspaceId: number };

export interface Receiving {
  /** Each receiving domain (verified, `inbound` on) with its workspace's routes on it. */
  domains: ReadonlyMap<string, { workspaceId: number; routes: ReceivingRoute[] }>;
}

/**
 * The receiving domains and their routes, read at most every few seconds: the inbound MX asks
 * at each RCPT. A route counts only on a domain of its own workspace.
 */
export class ReceivingRoutes {
  private cached: { at: number; value: Receiving } | null = null;
  private loading: Promise<Receiving> | null = null;

  constructor(
    private readonly db: Conn,
    private readonly clock: Clock,
  ) {}

  async snapshot(): Promise<Receiving> {
    if (this.cached && this.clock.now() - this.cached.at < RECEIVING_CACHE_MS) return this.cached.value;
    this.loading ??= this.load().finally(() => (this.loading = null));
    return this.loading;
  }

  private async load(): Promise<Receiving> {
    const [domains, routes] = await Promise.all([routesRepo.receivingDomains(this.db), routesRepo.all(this.db)]);
    const byName = new Map(domains.map((d) => [d.name, { workspaceId: d.workspace_id, routes: [] as ReceivingRoute[] }]));
    for (const r of routes) {
      const match = parseMatch(r.route_match);
      if (typeof match === 'string') continue;
      const domain = byName.get(match.domain);
      if (domain && domain.workspaceId === r.workspace_id) domain.routes.push({ id: r.id, match, priority: r.route_priority, workspaceId: r.workspace_id });
    }
    const value = { domains: byName };
    this.cached = { at: this.clock.now(), value };
    return value;
  }
}
