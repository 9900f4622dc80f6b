import { randomBytes } from 'node:crypto';
import { hostname as machineName } from 'node:os';
import type { Config } from '../config/schema.ts';
import type { Clock, Logger } from '../core/ports.ts';
import type { Metrics } from '../metrics/registry.ts';
import type { Db } from '../store/db.ts';
import type { GroupCommitter } from '../store/groupCommit.ts';
import { webhookQueue, type DueDelivery, type EndpointPolicy } from '../store/webhookQueue.ts';
import type { EndpointStatus, WebhookAttemptRow, WebhookEndpointRow } from '../store/webhooks.ts';
import { deliveryWebhookId, type PostResult, type WebhookPoster } from './post.ts';

/** Endpoints one process sends to at once, each in a lane of its own. */
const MAX_LANES = 64;
/** Deliveries a lane reads per query. */
const BATCH = 100;
/** Answered deliveries a lane records in one write. */
const FLUSH_EVERY = 50;
/** How often idle dispatchers look for due work. */
const POLL_MS = 200;

interface Answered {
  row: DueDelivery;
  result: PostResult;
}

export interface DispatcherDeps {
  db: Db;
  committer: GroupCommitter;
  clock: Clock;
  log: Logger;
  metrics?: Metrics;
  poster: WebhookPoster;
  config: Config['webhooks'];
  leaseMs: number;
}

/** When the attempt after `attempts` failed ones is due, or null once the schedule is spent. */
export function retryAt(schedule: number[], attempts: number, now: number): number | null {
  return attempts <= schedule.length ? now + schedule[attempts - 1] * 1000 : null;
}

/**
 * Drains the webhook outbox. Each claimed endpoint gets a lane that POSTs its due deliveries
 * one at a time in id order (a paused endpoint: only its probe), so a slow or dead receiver
 * holds only its own lane. Successes are written in batches committed while the lane goes on
 * to the next POSTs; a failure's write is awaited, since it may pause the endpoint.
 */
export class WebhookDispatcher {
  readonly owner = `${machineName().slice(0, 40)}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly lanes = new Map<number, Promise<void>>();
  private stopping = false;
  private running: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private readonly policy: EndpointPolicy;

  constructor(private readonly deps: DispatcherDeps) {
    this.policy = {
      pauseAfter: deps.config.pauseAfter,
      probeMs: deps.config.probeInterval * 1000,
      disableAfterMs: deps.config.disableAfter * 1000,
    };
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** Stops claiming, lets POSTs in flight finish (each bounded by the timeout), frees the leases. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    const renew = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.deps.leaseMs / 3)));
    renew.unref();
    try {
      while (!this.stopping) {
        await this.claim().catch((err) => this.deps.log.warn({ err }, 'webhook claim failed; will retry'));
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_MS);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      await Promise.allSettled(this.lanes.values());
    } finally {
      clearInterval(renew);
    }
  }

  private async claim(): Promise<void> {
    const { db, clock, leaseMs } = this.deps;
    const endpoints = await webhookQueue.claimEndpoints(db, { owner: this.owner, now: clock.now(), leaseMs, limit: MAX_LANES - this.lanes.size });
    for (const ep of endpoints) {
      if (this.lanes.has(ep.id)) continue;
      this.lanes.set(
        ep.id,
        this.lane(ep)
          .catch((err) => this.deps.log.warn({ err, endpoint: ep.id }, 'webhook lane failed; its deliveries stay pending'))
          .finally(() => {
            this.lanes.delete(ep.id);
            void webhookQueue.releaseEndpoint(db, this.owner, ep.id).catch(() => undefined);
          }),
      );
    }
  }

  private async lane(first: WebhookEndpointRow): Promise<void> {
    let ep: WebhookEndpointRow | undefined = first;
    const answered: Answered[] = [];
    let flushing: Promise<void> = Promise.resolve();
    // Successes are recorded in one write per flush, committed while the next POSTs go out.
    const flush = (endpointId: number) => {
      const batch = answered.splice(0);
      if (batch.length > 0) flushing = flushing.then(() => this.recordSuccesses(endpointId, batch));
      return flushing;
    };
    while (ep && !this.stopping) {
      const probing = ep.status === 'paused';
      const rows = await this.work(ep);
      if (rows.length === 0) break;
      for (const row of rows) {
        if (this.stopping) break;
        const result = await this.deps.poster.post(ep.url, row.payload, ep.secret, deliveryWebhookId(row));
        if (result.ok) {
          answered.push({ row, result });
          if (answered.length >= FLUSH_EVERY) void flush(ep.id);
          continue;
        }
        await flush(ep.id);
        const status = await this.recordFailure(row, result, probing);
        if (status !== 'active') break;
      }
      await flush(ep.id);
      // Re-read between batches: a rotated secret, a new URL or a PATCHed status take effect.
      ep = await webhookQueue.leased(this.deps.db, this.owner, ep.id);
    }
    await flush(first.id);
  }

  private work(ep: WebhookEndpointRow): Promise<DueDelivery[]> {
    const now = this.deps.clock.now();
    if (ep.status === 'active') return webhookQueue.due(this.deps.db, ep.id, now, BATCH);
    if (ep.status === 'paused' && (ep.next_probe_at ?? 0) <= now) return webhookQueue.probe(this.deps.db, ep.id);
    return Promise.resolve([]);
  }

  private attemptRow(row: DueDelivery, result: PostResult, now: number): Omit<WebhookAttemptRow, 'id'> {
    return {
      delivery_id: row.id,
      endpoint_id: row.endpoint_id,
      event: row.event,
      email_id: row.email_id,
      attempt: row.attempts + 1,
      response_code: result.status,
      response_body: result.body,
      error: result.error,
      duration_ms: result.durationMs,
      created_at: now,
    };
  }

  /**
   * Records answered deliveries. A failure here leaves them pending, so they are sent again:
   * delivery is at least once, receivers deduplicate.
   */
  private async recordSuccesses(endpointId: number, batch: Answered[]): Promise<void> {
    const { clock, metrics } = this.deps;
    try {
      const held = await this.deps.committer.run(async (tx) => {
        const now = clock.now();
        if (!(await webhookQueue.holds(tx, this.owner, endpointId, now))) return false;
        await webhookQueue.succeeded(
          tx,
          endpointId,
          batch.map((a) => this.attemptRow(a.row, a.result, now)),
          now,
        );
        return true;
      });
      const now = clock.now();
      metrics?.webhookAttempts.inc({ outcome: held ? 'delivered' : 'lease_lost' }, batch.length);
      if (held) for (const a of batch) metrics?.webhookLatency.observe(Math.max(0, now - a.row.created_at) / 1000);
    } catch (err) {
      this.deps.log.warn({ err, endpoint: endpointId, deliveries: batch.length }, 'recording webhook successes failed; they will be sent again');
    }
  }

  /**
   * Logs a failed attempt and applies it; returns the endpoint's status after it. A failed probe
   * spends nothing of its delivery's retries: the probe runs on the endpoint's schedule, and an
   * outage longer than the retry series must not give up the oldest waiting delivery.
   */
  private recordFailure(row: DueDelivery, result: PostResult, probe: boolean): Promise<EndpointStatus | 'lease_lost'> {
    const { clock, metrics } = this.deps;
    return this.deps.committer.run(async (tx) => {
      const now = clock.now();
      if (!(await webhookQueue.holds(tx, this.owner, row.endpoint_id, now))) {
        metrics?.webhookAttempts.inc({ outcome: 'lease_lost' });
        return 'lease_lost' as const;
      }
      await webhookQueue.logAttempt(tx, this.attemptRow(row, result, now));
      const next = probe ? now : retryAt(this.deps.config.retrySchedule, row.attempts + 1, now);
      metrics?.webhookAttempts.inc({ outcome: next === null ? 'gave_up' : 'failed' });
      return webhookQueue.failed(tx, row, now, next, this.policy);
    });
  }

  private async renew(): Promise<void> {
    try {
      await webhookQueue.renewEndpoints(this.deps.db, this.owner, [...this.lanes.keys()], this.deps.clock.now(), this.deps.leaseMs);
    } catch (err) {
      this.deps.log.warn({ err }, 'webhook lease renewal failed; will retry');
    }
  }
}
