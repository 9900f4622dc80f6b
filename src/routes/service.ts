import { invalid } from '../core/errors.ts';
import { iso, isoOrNull } from '../core/time.ts';
import type { Tx } from '../store/db.ts';
import { domainsRepo } from '../store/domains.ts';
import { routesRepo, type RouteRow } from '../store/routes.ts';
import { webhooksRepo, type WebhookAttemptRow, type WebhookEndpointRow } from '../store/webhooks.ts';
import { EndpointService, newSecret, reactivation } from '../webhooks/endpoint-service.ts';
import { formatMatch, parseMatch } from './match.ts';

export const RECEIVED_EVENT = 'email.received';

export const routeView = (row: RouteRow) => ({
  id: row.id,
  match: row.route_match,
  url: row.url,
  priority: row.route_priority,
  status: row.status,
  failure_count: row.failure_count,
  last_success_at: isoOrNull(row.last_success_at),
  secret: row.secret,
  created_at: iso(row.created_at),
});

/** An entry of a route's delivery log: one POST of a received message. */
export const routeAttemptView = (row: WebhookAttemptRow) => ({
  id: row.id,
  inbound_id: row.email_id,
  attempt: row.attempt,
  response_code: row.response_code,
  response_body: row.response_body,
  error: row.error,
  duration_ms: row.duration_ms,
  created_at: iso(row.created_at),
});

const priorityOf = (p: number | undefined): number => {
  if (p === undefined) return 0;
  if (!Number.isInteger(p) || p < 0 || p > 1_000_000) throw invalid('Field `priority` must be an integer from 0 to 1000000');
  return p;
};

/** The routes of each workspace: registration, changes, the delivery log, replay (SPEC §14). */
export class RouteService extends EndpointService<RouteRow> {
  protected find(id: number): Promise<RouteRow | undefined> {
    return routesRepo.byId(this.deps.db, id);
  }

  /** Every message the route took since `since`. */
  protected queueAgain(tx: Tx, route: RouteRow, since: number, now: number): Promise<number> {
    return routesRepo.replay(tx, route.id, since, now);
  }

  /** The match, normalised; its domain must be one of the workspace's receiving domains. */
  private async checkMatch(workspaceId: number, input: string): Promise<string> {
    const match = parseMatch(input);
    if (typeof match === 'string') throw invalid(match);
    const domain = await domainsRepo.byName(this.deps.db, match.domain);
    if (!domain || domain.workspace_id !== workspaceId) throw invalid(`Field \`match\`: ${match.domain} is not a domain of this workspace`);
    if (!domain.inbound) throw invalid(`Field \`match\`: ${match.domain} does not receive mail; turn it on first (PATCH /domains/${domain.id} {"inbound": true})`);
    return formatMatch(match);
  }

  async create(workspaceId: number, input: { match: string; url: string; priority?: number }): Promise<RouteRow> {
    const match = await this.checkMatch(workspaceId, input.match);
    const url = await this.checkUrl(input.url);
    const now = this.deps.clock.now();
    const row: Omit<WebhookEndpointRow, 'id'> & { route_match: string; route_priority: number } = {
      workspace_id: workspaceId,
      url,
      events: JSON.stringify([RECEIVED_EVENT]),
      secret: newSecret(),
      status: 'active',
      failure_count: 0,
      last_success_at: null,
      route_match: match,
      route_priority: priorityOf(input.priority),
      created_at: now,
      updated_at: now,
    };
    return { ...row, id: await webhooksRepo.insertEndpoint(this.deps.db, row) };
  }

  list(workspaceId: number): Promise<RouteRow[]> {
    return routesRepo.list(this.deps.db, workspaceId);
  }

  /** `status: "active"` re-activates a paused or disabled route and resets its failure count. */
  async update(workspaceId: number, id: number, patch: { match?: string; url?: string; priority?: number; status?: string }): Promise<RouteRow> {
    await this.get(workspaceId, id);
    const changes: Partial<RouteRow> = { updated_at: this.deps.clock.now(), ...reactivation(patch.status) };
    if (patch.match !== undefined) changes.route_match = await this.checkMatch(workspaceId, patch.match);
    if (patch.url !== undefined) changes.url = await this.checkUrl(patch.url);
    if (patch.priority !== undefined) changes.route_priority = priorityOf(patch.priority);
    await webhooksRepo.updateEndpoint(this.deps.db, id, changes);
    return this.get(workspaceId, id);
  }
}
