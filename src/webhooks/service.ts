import { invalid, notFound } from '../core/errors.ts';
import type { Clock } from '../core/ports.ts';
import { randomBase62 } from '../core/random.ts';
import { iso, isoOrNull } from '../core/time.ts';
import { EVENT_NAMES } from '../events/record.ts';
import type { Db } from '../store/db.ts';
import { webhooksRepo, type WebhookAttemptRow, type WebhookEndpointRow } from '../store/webhooks.ts';
import { checkUrlAtRegistration, type HostResolver, type Reach } from './address-policy.ts';

export const newSecret = (): string => `whsec_${randomBase62(32)}`;

export const endpointView = (row: WebhookEndpointRow) => ({
  id: row.id,
  url: row.url,
  events: row.events === null ? [...EVENT_NAMES] : (JSON.parse(row.events) as string[]),
  status: row.status,
  failure_count: row.failure_count,
  last_success_at: isoOrNull(row.last_success_at),
  secret: row.secret,
  created_at: iso(row.created_at),
});

export const attemptView = (row: WebhookAttemptRow) => ({
  id: row.id,
  event: row.event,
  email_id: row.email_id,
  recipient: row.recipient ?? null,
  attempt: row.attempt,
  response_code: row.response_code,
  response_body: row.response_body,
  error: row.error,
  duration_ms: row.duration_ms,
  created_at: iso(row.created_at),
});

/** The `webhook test` event: shaped like `email.delivered`, for email 0, to see a receiver answer. */
export const testEventBody = (hostname: string, now: number): string =>
  JSON.stringify({
    event: 'email.delivered',
    occurred_at: iso(now),
    email_id: 0,
    recipient: 'test@example.com',
    provider: { response: '250 2.0.0 Ok: test event sent by mailsvc webhook test', reporting_mta: hostname, status: '2.0.0', smtp_code: 250 },
  });

/** The `webhook-id` of a test event: it is no recorded event, so a new id each time. */
export const testWebhookId = (): string => `test_${randomBase62(20)}`;

/** Subscriptions: the event names, each known, without repeats; none given means every event. */
function checkEvents(events: string[] | undefined): string | null {
  if (events === undefined) return null;
  if (events.length === 0) throw invalid('Field `events` must name at least one event');
  const unknown = events.find((e) => !(EVENT_NAMES as readonly string[]).includes(e));
  if (unknown !== undefined) throw invalid(`Field \`events\`: unknown event "${unknown.slice(0, 100)}"; events are ${EVENT_NAMES.join(', ')}`);
  return JSON.stringify([...new Set(events)]);
}

/** The webhook endpoints of each workspace: registration, changes, the delivery log, replay. */
export class WebhookService {
  constructor(private readonly deps: { db: Db; clock: Clock; resolve: HostResolver; reach: Reach }) {}

  private checkUrl(url: string): Promise<string> {
    return checkUrlAtRegistration(url, this.deps.resolve, this.deps.reach);
  }

  async create(workspaceId: number, input: { url: string; events?: string[] }): Promise<WebhookEndpointRow> {
    const url = await this.checkUrl(input.url);
    const now = this.deps.clock.now();
    const row: Omit<WebhookEndpointRow, 'id'> = {
      workspace_id: workspaceId,
      url,
      events: checkEvents(input.events),
      secret: newSecret(),
      status: 'active',
      failure_count: 0,
      last_success_at: null,
      created_at: now,
      updated_at: now,
    };
    return { ...row, id: await webhooksRepo.insertEndpoint(this.deps.db, row) };
  }

  list(workspaceId: number): Promise<WebhookEndpointRow[]> {
    return webhooksRepo.endpointsOf(this.deps.db, workspaceId);
  }

  async get(workspaceId: number, id: number): Promise<WebhookEndpointRow> {
    const row = await webhooksRepo.endpointById(this.deps.db, id);
    if (!row || row.workspace_id !== workspaceId) throw notFound();
    return row;
  }

  /** `status: "active"` re-activates a paused or disabled endpoint and resets its failure count. */
  async update(workspaceId: number, id: number, patch: { url?: string; events?: string[]; status?: string }): Promise<WebhookEndpointRow> {
    await this.get(workspaceId, id);
    if (patch.status !== undefined && patch.status !== 'active') throw invalid('Field `status` can only be set to `active`');
    const changes: Partial<WebhookEndpointRow> = { updated_at: this.deps.clock.now() };
    if (patch.url !== undefined) changes.url = await this.checkUrl(patch.url);
    if (patch.events !== undefined) changes.events = checkEvents(patch.events);
    if (patch.status === 'active') Object.assign(changes, { status: 'active', failure_count: 0, next_probe_at: null });
    await webhooksRepo.updateEndpoint(this.deps.db, id, changes);
    return this.get(workspaceId, id);
  }

  /** Any workspace's endpoint, for the operator's CLI. */
  async byId(id: number): Promise<WebhookEndpointRow> {
    const row = await webhooksRepo.endpointById(this.deps.db, id);
    if (!row) throw notFound();
    return row;
  }

  async remove(workspaceId: number, id: number): Promise<void> {
    await this.get(workspaceId, id);
    await webhooksRepo.deleteEndpoint(this.deps.db, id);
  }

  /** A new secret at once: retries still pending are signed with it. */
  async rotateSecret(workspaceId: number, id: number): Promise<WebhookEndpointRow> {
    await this.get(workspaceId, id);
    await webhooksRepo.updateEndpoint(this.deps.db, id, { secret: newSecret(), updated_at: this.deps.clock.now() });
    return this.get(workspaceId, id);
  }

  async attempts(workspaceId: number, id: number, opts: { beforeId?: number; limit: number }): Promise<WebhookAttemptRow[]> {
    await this.get(workspaceId, id);
    return webhooksRepo.attemptsOf(this.deps.db, id, opts);
  }

  /** Queues again every event of the endpoint since `since` (ISO 8601); returns how many. */
  async replay(workspaceId: number, id: number, since: string): Promise<number> {
    const endpoint = await this.get(workspaceId, id);
    const at = /^\d{4}-\d\d-\d\dT/.test(since) ? Date.parse(since) : Number.NaN;
    if (Number.isNaN(at)) throw invalid('Field `since` must be an ISO 8601 timestamp');
    const now = this.deps.clock.now();
    return this.deps.db.transaction((tx) => webhooksRepo.replay(tx, endpoint, at, now));
  }
}
