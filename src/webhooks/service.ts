import { invalid } from '../core/errors.ts';
import { randomBase62 } from '../core/random.ts';
import { iso, isoOrNull } from '../core/time.ts';
import { EVENT_NAMES } from '../events/record.ts';
import type { Tx } from '../store/db.ts';
import { webhooksRepo, type WebhookAttemptRow, type WebhookEndpointRow } from '../store/webhooks.ts';
import { EndpointService, newSecret, reactivation } from './endpoint-service.ts';

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
export class WebhookService extends EndpointService<WebhookEndpointRow> {
  protected find(id: number): Promise<WebhookEndpointRow | undefined> {
    return webhooksRepo.endpointById(this.deps.db, id);
  }

  /** Every event of the workspace the endpoint subscribes to, since `since`. */
  protected queueAgain(tx: Tx, endpoint: WebhookEndpointRow, since: number, now: number): Promise<number> {
    return webhooksRepo.replay(tx, endpoint, since, now);
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

  /** `status: "active"` re-activates a paused or disabled endpoint and resets its failure count. */
  async update(workspaceId: number, id: number, patch: { url?: string; events?: string[]; status?: string }): Promise<WebhookEndpointRow> {
    await this.get(workspaceId, id);
    const changes: Partial<WebhookEndpointRow> = { updated_at: this.deps.clock.now(), ...reactivation(patch.status) };
    if (patch.url !== undefined) changes.url = await this.checkUrl(patch.url);
    if (patch.events !== undefined) changes.events = checkEvents(patch.events);
    await webhooksRepo.updateEndpoint(this.deps.db, id, changes);
    return this.get(workspaceId, id);
  }
}
