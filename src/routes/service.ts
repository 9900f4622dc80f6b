import { invalid, notFound } from '../core/errors.ts';
import type { Clock } from '../core/ports.ts';
import { iso, isoOrNull } from '../core/time.ts';
import type { Db } from '../store/db.ts';
import { domainsRepo } from '../store/domains.ts';
import { routesRepo, type RouteRow } from '../store/routes.ts';
import { webhooksRepo, type WebhookAttemptRow, type WebhookEndpointRow } from '../store/webhooks.ts';
import { checkUrlAtRegistration, type HostResolver, type Reach } from '../webhooks/address-policy.ts';
import { newSecret } from '../webhooks/service.ts';
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
export class RouteService {
  constructor(private readonly deps: { db: Db; clock: Clock; resolve: HostResolver; reach: Reach }) {}

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
    const url = await checkUrlAtRegistration(input.url, this.deps.resolve, this.deps.reach);
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

  async get(workspaceId: number, id: number): Promise<RouteRow> {
    const row = await routesRepo.byId(this.deps.db, id);
    if (!row || row.workspace_id !== workspaceId) throw notFound();
    return row;
  }

  /** Any workspace's route, for the operator's CLI. */
  async byId(id: number): Promise<RouteRow> {
    const row = await routesRepo.byId(this.deps.db, id);
    if (!row) throw notFound();
    return row;
  }

  /** `status: "active"` re-activates a paused or disabled route and resets its failure count. */
  async update(workspaceId: number, id: number, patch: { match?: string; url?: string; priority?: number; status?: string }): Promise<RouteRow> {
    await this.get(workspaceId, id);
    if (patch.status !== undefined && patch.status !== 'active') throw invalid('Field `status` can only be set to `active`');
    const changes: Partial<RouteRow> = { updated_at: this.deps.clock.now() };
    if (patch.match !== undefined) changes.route_match = await this.checkMatch(workspaceId, patch.match);
    if (patch.url !== undefined) changes.url = await checkUrlAtRegistration(patch.url, this.deps.resolve, this.deps.reach);
    if (patch.priority !== undefined) changes.route_priority = priorityOf(patch.priority);
    if (patch.status === 'active') Object.assign(changes, { status: 'active', failure_count: 0, next_probe_at: null });
    await webhooksRepo.updateEndpoint(this.deps.db, id, changes);
    return this.get(workspaceId, id);
  }

  async remove(workspaceId: number, id: number): Promise<void> {
    await this.get(workspaceId, id);
    await webhooksRepo.deleteEndpoint(this.deps.db, id);
  }

  /** A new secret at once: retries still pending are signed with it. */
  async rotateSecret(workspaceId: number, id: number): Promise<RouteRow> {
    await this.get(workspaceId, id);
    await webhooksRepo.updateEndpoint(this.deps.db, id, { secret: newSecret(), updated_at: this.deps.clock.now() });
    return this.get(workspaceId, id);
  }

  /** The route's delivery log, newest first. */
  async attempts(workspaceId: number, id: number, opts: { beforeId?: number; limit: number }): Promise<WebhookAttemptRow[]> {
    await this.get(workspaceId, id);
    return webhooksRepo.attemptsOf(this.deps.db, id, opts);
  }

  /** Queues again every message the route took since `since` (ISO 8601); returns how many. */
  async replay(workspaceId: number, id: number, since: string): Promise<number> {
    await this.get(workspaceId, id);
    const at = /^\d{4}-\d\d-\d\dT/.test(since) ? Date.parse(since) : Number.NaN;
    if (Number.isNaN(at)) throw invalid('Field `since` must be an ISO 8601 timestamp');
    const now = this.deps.clock.now();
    return this.deps.db.transaction((tx) => routesRepo.replay(tx, id, at, now));
  }
}
