import { invalid, notFound } from '../core/errors.ts';
import type { Clock } from '../core/ports.ts';
import { randomBase62 } from '../core/random.ts';
import type { Db, Tx } from '../store/db.ts';
import { webhooksRepo, type WebhookAttemptRow, type WebhookEndpointRow } from '../store/webhooks.ts';
import { checkUrlAtRegistration, type HostResolver, type Reach } from './address-policy.ts';

/** What endpoint management needs: the store, the clock, and the address policy's lookups for a URL. */
export interface EndpointDeps {
  db: Db;
  clock: Clock;
  resolve: HostResolver;
  reach: Reach;
}

export const newSecret = (): string => `whsec_${randomBase62(32)}`;

/** A replay's `since`: an ISO 8601 timestamp, as epoch milliseconds. */
function sinceOf(since: string): number {
  const at = /^\d{4}-\d\d-\d\dT/.test(since) ? Date.parse(since) : Number.NaN;
  if (Number.isNaN(at)) throw invalid('Field `since` must be an ISO 8601 timestamp');
  return at;
}

/**
 * What a PATCH's `status` changes: only `active` may be asked for, and it re-activates a paused
 * or disabled endpoint and resets its failure count.
 */
export function reactivation(status: string | undefined): Partial<Pick<WebhookEndpointRow, 'status' | 'failure_count' | 'next_probe_at'>> {
  if (status === undefined) return {};
  if (status !== 'active') throw invalid('Field `status` can only be set to `active`');
  return { status: 'active', failure_count: 0, next_probe_at: null };
}

/**
 * What webhook endpoints and inbound routes (endpoints with a match, SPEC §14) share once one is
 * found: listing and lookup within a workspace, removal, the secret's rotation, the delivery log
 * and replay. Each kind says how its rows are found and which deliveries a replay queues again.
 */
export abstract class EndpointService<Row extends WebhookEndpointRow> {
  constructor(protected readonly deps: EndpointDeps) {}

  /** The row of this kind with that id, in any workspace. */
  protected abstract find(id: number): Promise<Row | undefined>;

  /** The workspace's rows of this kind, oldest first. */
  abstract list(workspaceId: number): Promise<Row[]>;

  /** Makes the row's deliveries created at or after `since` pending again; returns how many. */
  protected abstract queueAgain(tx: Tx, row: Row, since: number, now: number): Promise<number>;

  /** A URL to send to, checked against the address policy as it is registered. */
  protected checkUrl(url: string): Promise<string> {
    return checkUrlAtRegistration(url, this.deps.resolve, this.deps.reach);
  }

  async get(workspaceId: number, id: number): Promise<Row> {
    const row = await this.find(id);
    if (!row || row.workspace_id !== workspaceId) throw notFound();
    return row;
  }

  /** Any workspace's row, for the operator's CLI. */
  async byId(id: number): Promise<Row> {
    const row = await this.find(id);
    if (!row) throw notFound();
    return row;
  }

  async remove(workspaceId: number, id: number): Promise<void> {
    await this.get(workspaceId, id);
    await webhooksRepo.deleteEndpoint(this.deps.db, id);
  }

  /** A new secret at once: retries still pending are signed with it. */
  async rotateSecret(workspaceId: number, id: number): Promise<Row> {
    await this.get(workspaceId, id);
    await webhooksRepo.updateEndpoint(this.deps.db, id, { secret: newSecret(), updated_at: this.deps.clock.now() });
    return this.get(workspaceId, id);
  }

  /** The delivery log, newest first. */
  async attempts(workspaceId: number, id: number, opts: { beforeId?: number; limit: number }): Promise<WebhookAttemptRow[]> {
    await this.get(workspaceId, id);
    return webhooksRepo.attemptsOf(this.deps.db, id, opts);
  }

  /** Queues again what was sent to the row since `since` (ISO 8601); returns how many. */
  async replay(workspaceId: number, id: number, since: string): Promise<number> {
    const row = await this.get(workspaceId, id);
    const at = sinceOf(since);
    const now = this.deps.clock.now();
    return this.deps.db.transaction((tx) => this.queueAgain(tx, row, at, now));
  }
}
