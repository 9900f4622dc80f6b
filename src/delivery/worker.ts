import type { Clock, DnsResolver, Logger, RandomSource } from '../core/ports.ts';
import type { Config } from '../config/schema.ts';
import type { Metrics } from '../metrics/registry.ts';
import type { Db } from '../store/db.ts';
import type { GroupCommitter } from '../store/groupCommit.ts';
import type { RecipientRow } from '../store/messages.ts';
import { queueRepo } from '../store/queue.ts';
import { queueControlRepo } from '../store/queue-control.ts';
import type { TokenCodec } from '../tokens/index.ts';
import { LeasedClaims } from './claims.ts';
import { FairScheduler } from './fair-scheduler.ts';
import type { Recorded, Verdict } from './outcome.ts';
import { memoryPacer, type Pacer } from './pacer.ts';
import { RecipientPipeline } from './pipeline.ts';
import { OutcomeRecorder } from './record.ts';
import { relayOf } from './relay.ts';
import { sendAsPrepared, type RenderStep } from './render.ts';
import { Shaper } from './shaper.ts';
import { inlineSigner, signingThreads, SigningPool, type CopySigner } from './sign-pool.ts';
import { createSmtpTransport } from './smtp-transport.ts';
import { MtaSts, trustAnchors } from './mta-sts.ts';
import type { SmtpTransport } from './transport.ts';

export interface DeliveryDeps {
  config: Config;
  db: Db;
  committer: GroupCommitter;
  clock: Clock;
  random: RandomSource;
  dns: DnsResolver;
  log: Logger;
  metrics: Metrics;
  tokens: { verp: TokenCodec };
  /** Pacing of groups' per-minute limits; default: in this process's memory. */
  pacer?: Pacer;
}

export interface DeliveryOptions {
  /** Defaults to an SMTP transport built from `delivery.*`. */
  transport?: SmtpTransport;
  /** The per-recipient render step (tracking, unsubscribe); default: the shared parts. */
  render?: RenderStep;
  /** How often an idle worker looks for due rows and releases scheduled ones (default 200 ms). */
  pollMs?: number;
  /** How long stop() lets in-flight transactions finish before releasing their leases (default 10 s). */
  stopGraceMs?: number;
  /** Builds and signs the copies; default: `delivery.signingThreads` threads, ended by stop(). */
  signer?: CopySigner;
  /** Called once an attempt's outcome is committed (the sandbox's receivers react to it). */
  afterOutcome?: (row: RecipientRow, recorded: Recorded) => Promise<void>;
}

/** What `runOnce` and the loop report: rows claimed and what became of them. */
export type PassResult = Record<Recorded['outcome'] | 'claimed' | 'error', number>;

const emptyPass = (): PassResult => ({ claimed: 0, delivered: 0, bounced: 0, failed: 0, deferred: 0, lease_lost: 0, error: 0 });

/**
 * A delivery worker: the claim loop and the scheduler. It claims due recipients in batches
 * under a lease (`claims.ts`), runs each through the pipeline (`pipeline.ts`: route, render,
 * sign, send) and records the outcome (`record.ts`) in a group-committed transaction that first
 * checks the lease is still ours. Many workers, in one or many processes, share the queue
 * safely; a dead worker's rows come back when its leases run out.
 */
export class DeliveryWorker {
  private readonly transport: SmtpTransport;
  private readonly signer: CopySigner;
  private readonly pipeline: RecipientPipeline;
  private readonly claims: LeasedClaims;
  private readonly scheduler: FairScheduler;
  private readonly shaper: Shaper;
  private readonly shaping: boolean;
  private readonly recorder: OutcomeRecorder;
  private readonly concurrency: number;
  private readonly pollMs: number;
  private readonly log: Logger;
  private running: Promise<void> | null = null;
  private stopRenewing: (() => void) | null = null;
  private stopping = false;
  private wake: (() => void) | null = null;
  /** The last claim was a full batch, so the loop continues as soon as slots free up. */
  private waitingForRoom = false;
  private pass: PassResult = emptyPass();

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly options: DeliveryOptions = {},
  ) {
    const d = deps.config.delivery;
    const relay = relayOf(d);
    this.concurrency = d.concurrency;
    this.pollMs = options.pollMs ?? 200;
    this.claims = new LeasedClaims(deps, d.leaseSeconds * 1000, (inFlight) => {
      deps.metrics.deliveryInFlight.set(inFlight);
      this.wakeIfRoom();
    });
    this.scheduler = new FairScheduler({ changed: () => this.wakeIfRoom() });
    this.log = deps.log.child({ phase: 'deliver', worker: this.claims.owner });
    this.shaper = new Shaper({ ...deps, pacer: deps.pacer ?? memoryPacer(), changed: () => this.wakeIfRoom() });
    // A smarthost shapes its own traffic, and the sandbox's inbox takes everything.
    this.shaping = !relay && !options.transport?.fixedDestination;
    this.recorder = new OutcomeRecorder(deps, this.claims.owner);
    const ca = trustAnchors(deps.config.tls.trustedCAs);
    this.transport =
      options.transport ??
      createSmtpTransport({ heloName: deps.config.server.hostname, tls: d.tls, maxConnectionsPerHost: d.maxConnectionsPerHost, relay, dns: deps.dns, tlsCa: ca });
    const followsPolicies = d.mtaSts.enabled && this.shaping;
    const mtaSts = followsPolicies
      ? new MtaSts({ dns: deps.dns, clock: deps.clock, log: this.log.child({ phase: 'mta-sts' }), port: d.mtaSts.port, timeoutMs: d.mtaSts.fetchTimeout * 1000, ca })
      : null;
    const threads = signingThreads(d.signingThreads);
    this.signer = options.signer ?? (threads === 0 ? inlineSigner() : new SigningPool(threads, this.log));
    this.pipeline = new RecipientPipeline({
      ...deps,
      verp: deps.tokens.verp,
      transport: this.transport,
      render: options.render ?? sendAsPrepared,
      signer: this.signer,
      scheduler: this.scheduler,
      relay,
      shaper: this.shaper,
      mtaSts,
    });
  }

  get owner(): string {
    return this.claims.owner;
  }

  /** Starts the claim loop and lease renewal; stop() ends both. */
  start(): void {
    if (this.running) return;
    this.signer.start();
    this.stopRenewing = this.claims.renewing();
    this.running = this.loop();
  }

  /**
   * One pass for tests and tools: releases due scheduled rows, then claims and delivers due rows
   * until none is left at the clock's current time, waiting for every outcome.
   */
  async runOnce(): Promise<PassResult> {
    this.pass = emptyPass();
    // Leases are renewed here too: a pass may wait on a transaction longer than a lease.
    const stopRenewing = this.claims.renewing();
    try {
      await queueRepo.releaseScheduled(this.deps.db, this.deps.clock.now());
      await queueControlRepo.sweepHolds(this.deps.db, this.deps.clock.now());
      if (this.shaping) await this.shaper.refresh();
      for (;;) {
        const { count: claimed } = await this.claim(this.concurrency);
        if (claimed === 0 && this.claims.size === 0) break;
        await this.claims.settled();
      }
      return this.pass;
    } finally {
      stopRenewing();
    }
  }

  /**
   * Stop claiming; let in-flight transactions finish for up to `stopGraceMs`; give the leases of
   * any still running back to the queue (due now) so another worker takes them at once; close
   * the connections. A transaction cut off here may reach the recipient twice, the one duplicate
   * at-least-once delivery accepts.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
    await Promise.race([this.claims.settled(), delay(this.options.stopGraceMs ?? 10_000)]);
    // Outcomes already waiting for their commit are written; a transaction still in flight now
    // finds the recorder closed and its row released below.
    await this.recorder.close();
    this.stopRenewing?.();
    const { unfinished, released } = await this.claims.releaseUnfinished();
    if (unfinished > 0) this.log.warn({ released }, `stopped with ${unfinished} transactions in flight; released=${released}`);
    await Promise.race([this.transport.close(), delay(1000)]);
    await this.shaper.close();
    if (this.signer !== this.options.signer) await this.signer.close();
  }

  stats() {
    return { inFlight: this.claims.size, connections: this.transport.stats() };
  }

  private async loop(): Promise<void> {
    let lastScheduled = 0;
    let lastShaped = 0;
    let lastSwept = 0;
    let moreScheduled = false;
    while (!this.stopping) {
      let full = false;
      try {
        const now = this.deps.clock.now();
        // The scheduler's job: scheduled rows become queued as soon as they are due (at most
        // 1 s late); claiming them in the same pass sends them right away. One chunk per pass,
        // so a burst due at one instant is sent while the rest of it is still being released.
        if (moreScheduled || now - lastScheduled >= this.pollMs || now < lastScheduled) {
          lastScheduled = now;
          moreScheduled = (await queueRepo.releaseScheduled(this.deps.db, now, RELEASE_CHUNK, 1)) === RELEASE_CHUNK;
        }
        // What other processes' replies did to groups reaches this one within a second.
        if (this.shaping && (now - lastShaped >= SHAPING_REFRESH_MS || now < lastShaped)) {
          lastShaped = now;
          await this.shaper.refresh();
        }
        // Due mail a standing hold covers becomes held (the claim skips it meanwhile). With no
        // hold stored this is one read of an empty table; with some, a pass over the due rows,
        // so at most once a second.
        if (now - lastSwept >= SWEEP_MS || now < lastSwept) {
          lastSwept = now;
          await queueControlRepo.sweepHolds(this.deps.db, now);
        }
        const room = this.room();
        if (room >= this.refillAt()) {
          const limit = Math.min(room, 100);
          const claimed = await this.claim(limit);
          // A claim cut short by a group's cap is not the end of what is due: the next
          // transaction to end makes room for it, so the loop waits for that, not for a poll.
          full = claimed.count === limit || claimed.capped;
        } else {
          full = true;
        }
      } catch (err) {
        this.log.warn({ err }, 'claiming failed; will retry');
        // After a failure, wait for the next poll rather than release again at once.
        moreScheduled = false;
      }
      // With a full batch more is probably due: continue as soon as there is room. Otherwise
      // sleep until the next poll (or until stop()), unless more scheduled rows are due now.
      this.waitingForRoom = full;
      if (moreScheduled && !this.stopping) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.pollMs);
        this.wake = done;
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        if (this.stopping) done();
      });
      this.wake = null;
    }
  }

  /**
   * Rows this worker may claim now. A row waiting for its turn to be rendered (heavy mail, see
   * FairScheduler) or for its group's pacing slot (Shaper) holds no slot, so other mail is
   * claimed beside it; up to
   * `concurrency` rows may wait that way, so claimed rows stay at most twice `concurrency`.
   */
  private room(): number {
    const waiting = this.scheduler.waiting + this.shaper.waiting;
    return Math.min(this.concurrency - (this.claims.size - waiting), 2 * this.concurrency - this.claims.size);
  }

  private wakeIfRoom(): void {
    if (this.waitingForRoom && this.room() >= this.refillAt()) this.wake?.();
  }

  /** Claims are batched: refill when half the slots are free, not on every completion. */
  private refillAt(): number {
    return Math.max(1, Math.floor(this.concurrency / 2));
  }

  /**
   * Claims up to `limit` due rows. Shaped, in up to three rounds: a group that took its whole
   * share in one round is left out of the next, so the rows of a big campaign to one provider,
   * filling the oldest due rows a claim looks at, do not hide the other groups' mail behind them.
   */
  private async claim(limit: number): Promise<{ count: number; capped: boolean }> {
    const work = (row: RecipientRow) => this.deliver(row);
    if (!this.shaping) {
      const count = await this.claims.claim(limit, work, (rows) => this.pipeline.preload(rows.map((r) => r.message_id)));
      this.pass.claimed += count;
      return { count, capped: false };
    }
    const shape = this.shaper.claimShape();
    const caps = new Map(shape.caps);
    let count = 0;
    let capped = false;
    for (let round = 0; round < CLAIM_ROUNDS && count < limit; round++) {
      let taken: RecipientRow[] = [];
      count += await this.claims.claim(
        limit - count,
        work,
        (rows) => {
          taken = rows;
          this.pipeline.preload(rows.map((r) => r.message_id));
        },
        shape,
      );
      const perGroup = new Map<string, number>();
      for (const row of taken) {
        const group = this.shaper.knownGroup(row.domain);
        perGroup.set(group, (perGroup.get(group) ?? 0) + 1);
      }
      const full = [...perGroup].filter(([group, n]) => n >= (caps.get(group) ?? shape.defaultCap)).map(([group]) => group);
      if (full.length === 0) break;
      capped = true;
      shape.exclude.push(...full);
      // Another round only while some other group may still have room: with one group known
      // (one destination) it would scan that group's whole backlog to find nothing.
      const others = perGroup.size > full.length || shape.caps.some(([group, cap]) => cap > 0 && !shape.exclude.includes(group));
      if (!others) break;
    }
    this.pass.claimed += count;
    return { count, capped };
  }

  /** One recipient: the pipeline gives a verdict, which is then recorded under the lease. */
  private async deliver(row: RecipientRow): Promise<void> {
    const startedAt = Date.now();
    // Until the message is read: its labels unknown, an event of this attempt carries none.
    let message = { id: row.message_id, workspace_id: row.workspace_id, stream: 'transactional' as 'transactional' | 'broadcast', domain: '', envelope: '{"tags":[]}' };
    let verdict: Verdict;
    try {
      const prepared = await this.pipeline.prepared(row.message_id);
      message = { ...prepared.message, envelope: prepared.row.envelope };
      verdict = await this.pipeline.attempt(row, prepared);
    } catch (err) {
      // Our own trouble (database, a broken stored message): retried like a 4xx, never a bounce.
      verdict = { kind: 'deferred', host: null, code: null, response: `Local error: ${(err as Error).message}` };
      this.pass.error++;
    }
    const recorded = await this.recorder.record(this.log, { row, message, verdict, startedAt });
    if (recorded) this.pass[recorded.outcome]++;
    else this.pass.error++;
    if (recorded) await this.options.afterOutcome?.(row, recorded);
  }
}

/** Scheduled rows released per transaction. */
const RELEASE_CHUNK = 100;
/** Shaped claim statements per pass at most (`claim`). */
const CLAIM_ROUNDS = 3;
/** How often a worker reads the groups other processes suspended or throttled. */
const SHAPING_REFRESH_MS = 1000;
/** How often the loop holds the due rows standing holds cover (`queueControlRepo.sweepHolds`). */
const SWEEP_MS = 1000;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
