import { randomBytes } from 'node:crypto';
import { hostname as machineName } from 'node:os';
import type { Clock, DnsResolver, Logger, RandomSource } from '../core/ports.ts';
import type { Config } from '../config/schema.ts';
import type { Metrics } from '../metrics/registry.ts';
import { bool, type Db, type Tx } from '../store/db.ts';
import { domainsRepo } from '../store/domains.ts';
import type { GroupCommitter } from '../store/groupCommit.ts';
import { messagesRepo, type RecipientRow } from '../store/messages.ts';
import { queueRepo } from '../store/queue.ts';
import type { TokenCodec } from '../tokens/index.ts';
import { TtlCache } from './cache.ts';
import { finishForRecipient, prepareMessage, sendAsPrepared, type DkimKey, type PreparedMessage, type RenderStep } from './compose.ts';
import { logOutcome } from './log.ts';
import { resolveDestination, type Destination } from './mx.ts';
import { judgeDestination, judgeSend, recordVerdict, type Recorded, type Verdict } from './outcome.ts';
import { createSmtpTransport } from './smtp-transport.ts';
import type { SmtpTransport } from './transport.ts';
import { verpSender } from './verp.ts';

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
}

export interface DeliveryOptions {
  /** Defaults to an SMTP transport built from `delivery.*`. */
  transport?: SmtpTransport;
  /** The per-recipient render step (tracking, unsubscribe); default: the shared bytes. */
  render?: RenderStep;
  /** How often an idle worker looks for due rows and releases scheduled ones (default 200 ms). */
  pollMs?: number;
  /** How long stop() lets in-flight transactions finish before releasing their leases (default 10 s). */
  stopGraceMs?: number;
}

interface SendingDomain {
  key: DkimKey;
  returnPathDomain: string;
}

/**
 * Messages up to this size stay built for their next recipients (200 of them at most, so the
 * cache stays under ~50 MB); a bigger one is shared only by the recipients claimed together.
 */
const MAX_CACHED_BYTES = 256 * 1024;

/** What `runOnce` and the loop report: rows claimed and what became of them. */
export type PassResult = Record<Recorded['outcome'] | 'claimed' | 'error', number>;

const emptyPass = (): PassResult => ({ claimed: 0, delivered: 0, bounced: 0, failed: 0, deferred: 0, lease_lost: 0, error: 0 });

function parseRelay(config: Config['delivery']) {
  if (!config.relayHost) return undefined;
  const at = config.relayHost.lastIndexOf(':');
  return {
    host: config.relayHost.slice(0, at),
    port: Number(config.relayHost.slice(at + 1)),
    ...(config.relayUser !== null ? { user: config.relayUser, pass: config.relayPassword ?? '' } : {}),
  };
}

/**
 * A delivery worker: claims due recipients in batches under a lease, sends each in its own SMTP
 * transaction (its own VERP sender), and records the outcome in a group-committed transaction
 * that first checks the lease is still ours. Many workers, in one or many processes, share the
 * queue safely; a dead worker's rows come back when its leases run out.
 */
export class DeliveryWorker {
  /** Unique per worker instance: a lease taken by an earlier run of this process is not ours. */
  readonly owner = `${machineName().slice(0, 40)}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly transport: SmtpTransport;
  private readonly render: RenderStep;
  private readonly relay: ReturnType<typeof parseRelay>;
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private readonly pollMs: number;
  private readonly inFlight = new Map<number, Promise<void>>();
  private readonly messages: TtlCache<PreparedMessage>;
  private readonly domains: TtlCache<SendingDomain>;
  private readonly destinations: TtlCache<Destination>;
  private readonly ownDomains: TtlCache<string[]>;
  private readonly log: Logger;
  private running: Promise<void> | null = null;
  private stopping = false;
  private wake: (() => void) | null = null;
  /** The last claim was a full batch, so the loop continues as soon as slots free up. */
  private waitingForRoom = false;
  private renewTimer: NodeJS.Timeout | null = null;
  private pass: PassResult = emptyPass();

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly options: DeliveryOptions = {},
  ) {
    const d = deps.config.delivery;
    this.relay = parseRelay(d);
    this.leaseMs = d.leaseSeconds * 1000;
    this.concurrency = d.concurrency;
    this.pollMs = options.pollMs ?? 200;
    this.render = options.render ?? sendAsPrepared;
    this.log = deps.log.child({ phase: 'deliver', worker: this.owner });
    this.transport =
      options.transport ??
      createSmtpTransport({
        heloName: deps.config.server.hostname,
        tls: d.tls,
        maxConnectionsPerHost: d.maxConnectionsPerHost,
        relay: this.relay,
        dns: deps.dns,
      });
    // Short lives: what the CLI changes (a domain's return path verified, a key rotated) reaches
    // a running worker within seconds (SPEC §9), and DNS answers are not kept past a few seconds.
    this.messages = new TtlCache(deps.clock, 60_000, 200);
    this.domains = new TtlCache(deps.clock, 5_000, 1000);
    this.destinations = new TtlCache(deps.clock, 5_000, 5000);
    this.ownDomains = new TtlCache(deps.clock, 5_000, 1);
  }

  /** Starts the claim loop and lease renewal; stop() ends both. */
  start(): void {
    if (this.running) return;
    this.renewTimer = setInterval(() => void this.renewLeases(), this.renewEveryMs());
    this.renewTimer.unref();
    this.running = this.loop();
  }

  /**
   * One pass for tests and tools: releases due scheduled rows, then claims and delivers due rows
   * until none is left at the clock's current time, waiting for every outcome.
   */
  async runOnce(): Promise<PassResult> {
    this.pass = emptyPass();
    // Leases are renewed here too: a pass may wait on a transaction longer than a lease.
    const renew = this.renewTimer ? null : setInterval(() => void this.renewLeases(), this.renewEveryMs());
    try {
      return await this.drainDue();
    } finally {
      if (renew) clearInterval(renew);
    }
  }

  private async drainDue(): Promise<PassResult> {
    await queueRepo.releaseScheduled(this.deps.db, this.deps.clock.now());
    for (;;) {
      const claimed = await this.claim(this.concurrency);
      if (claimed === 0 && this.inFlight.size === 0) break;
      await Promise.all(this.inFlight.values());
    }
    return this.pass;
  }

  /**
   * Stop claiming; let in-flight transactions finish for up to `stopGraceMs`; give the leases of
   * any still running back to the queue (due now) so another worker takes them at once; close
   * the connections. A transaction cut off here may reach the recipient twice, the one duplicate
   * SPEC §4 allows.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
    const grace = this.options.stopGraceMs ?? 10_000;
    await Promise.race([Promise.allSettled(this.inFlight.values()), delay(grace)]);
    if (this.renewTimer) clearInterval(this.renewTimer);
    const unfinished = [...this.inFlight.keys()];
    if (unfinished.length > 0) {
      const released = await queueRepo.release(this.deps.db, this.owner, unfinished, this.deps.clock.now()).catch(() => 0);
      this.log.warn({ released }, `stopped with ${unfinished.length} transactions in flight; released=${released}`);
    }
    await Promise.race([this.transport.close(), delay(1000)]);
  }

  stats() {
    return { inFlight: this.inFlight.size, connections: this.transport.stats() };
  }

  private async loop(): Promise<void> {
    let lastScheduled = 0;
    while (!this.stopping) {
      let full = false;
      try {
        const now = this.deps.clock.now();
        // The scheduler's job: scheduled rows become queued as soon as they are due (SPEC §1:
        // at most 1 s late); claiming them in the same pass sends them right away.
        if (now - lastScheduled >= this.pollMs || now < lastScheduled) {
          lastScheduled = now;
          await queueRepo.releaseScheduled(this.deps.db, now);
        }
        const room = this.concurrency - this.inFlight.size;
        if (room >= this.refillAt()) {
          const limit = Math.min(room, 100);
          full = (await this.claim(limit)) === limit;
        } else {
          full = true;
        }
      } catch (err) {
        this.log.warn({ err }, 'claiming failed; will retry');
      }
      // With a full batch more is probably due: continue as soon as there is room. Otherwise
      // sleep until the next poll (or until stop()).
      this.waitingForRoom = full;
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

  /** A third of a lease: two renewals may fail (a busy database) before the lease runs out. */
  private renewEveryMs(): number {
    return Math.max(100, Math.floor(this.leaseMs / 3));
  }

  /** Claims are batched: refill when half the slots are free, not on every completion. */
  private refillAt(): number {
    return Math.max(1, Math.floor(this.concurrency / 2));
  }

  private async claim(limit: number): Promise<number> {
    const rows = await queueRepo.claim(this.deps.db, { owner: this.owner, now: this.deps.clock.now(), leaseMs: this.leaseMs, limit });
    for (const row of rows) {
      // Our own lease may have lapsed while we still work on the row (a stalled event loop):
      // the claim renewed it, and the delivery already running will record the outcome.
      if (this.inFlight.has(row.id)) continue;
      const work = this.deliver(row).finally(() => {
        this.inFlight.delete(row.id);
        this.deps.metrics.deliveryInFlight.set(this.inFlight.size);
        if (this.waitingForRoom && this.concurrency - this.inFlight.size >= this.refillAt()) this.wake?.();
      });
      this.inFlight.set(row.id, work);
    }
    this.pass.claimed += rows.length;
    this.deps.metrics.deliveryInFlight.set(this.inFlight.size);
    return rows.length;
  }

  private async renewLeases(): Promise<void> {
    const ids = [...this.inFlight.keys()];
    if (ids.length === 0) return;
    try {
      await queueRepo.renew(this.deps.db, this.owner, ids, this.deps.clock.now(), this.leaseMs);
    } catch (err) {
      this.log.warn({ err }, 'lease renewal failed; will retry');
    }
  }

  /** The delivery pipeline for one recipient; each step may end it with a verdict. */
  private async deliver(row: RecipientRow): Promise<void> {
    const started = Date.now();
    let message: PreparedMessage['message'] | undefined;
    let verdict: Verdict;
    try {
      const prepared = await this.prepared(row.message_id);
      message = prepared.message;
      verdict = await this.attempt(row, prepared);
    } catch (err) {
      // Our own trouble (database, a broken stored message): retried like a 4xx, never a bounce.
      verdict = { kind: 'deferred', host: null, code: null, response: `Local error: ${(err as Error).message}` };
      this.pass.error++;
    }
    let recorded: Recorded;
    const m = message ?? { id: row.message_id, workspace_id: row.workspace_id, stream: 'transactional' as const, domain: '' };
    const record = (tx: Tx) =>
      recordVerdict(tx, row, m, verdict, {
        owner: this.owner,
        now: this.deps.clock.now(),
        random: this.deps.random,
        policy: { scheduleSeconds: this.deps.config.delivery.retrySchedule, maxAgeSeconds: this.deps.config.delivery.maxAge },
        hostname: this.deps.config.server.hostname,
      });
    try {
      // A failed shared commit is retried job by job by the committer itself.
      recorded = await this.deps.committer.run(record);
    } catch (err) {
      // Nothing was written: the lease runs out and the row is tried again.
      this.pass.error++;
      this.log.error({ err, email_id: row.message_id, recipient_id: row.id }, 'could not record the outcome; the row will be retried after its lease');
      return;
    }
    this.pass[recorded.outcome]++;
    const seconds = (Date.now() - started) / 1000;
    this.deps.metrics.deliveryOutcomes.inc({ outcome: recorded.outcome, bounce_type: 'bounceType' in recorded ? (recorded.bounceType ?? '') : '' });
    this.deps.metrics.deliveryDuration.observe({ outcome: recorded.outcome }, seconds);
    logOutcome(this.log, row, verdict, recorded, seconds);
  }

  /** The message row and its MIME, loaded and built once for all its recipients. */
  private prepared(messageId: number): Promise<PreparedMessage> {
    return this.messages.get(String(messageId), async () => {
      const message = await messagesRepo.byId(this.deps.db, messageId);
      if (!message) throw new Error(`message ${messageId} is gone`);
      return prepareMessage(message, this.deps.config.server.hostname);
    }, (prepared) => prepared.raw.length <= MAX_CACHED_BYTES);
  }

  private async attempt(row: RecipientRow, prepared: PreparedMessage): Promise<Verdict> {
    const sending = await this.sendingDomain(prepared.message.domain);
    const from = verpSender(this.deps.tokens.verp, row.id, sending.returnPathDomain);
    const raw = await finishForRecipient(prepared, { id: row.id, address: row.address }, this.render, sending.key, this.deps.clock.now());

    const destination = await this.destination(row.domain);
    if (destination.kind !== 'hosts') return judgeDestination(destination);
    let last: Verdict | null = null;
    // RFC 5321 §5.1: try each host in order until one takes the message or refuses it for good.
    for (const host of destination.hosts) {
      const result = await this.transport.send({ host, port: this.deps.config.delivery.port, envelope: { from, to: row.address }, raw });
      last = judgeSend(result);
      if (last.kind !== 'deferred') return last;
    }
    return last!;
  }

  private destination(domain: string): Promise<Destination> {
    // A smarthost takes everything: no MX lookup at all (the relay host is the transport's).
    if (this.relay) return Promise.resolve({ kind: 'hosts', hosts: [this.relay.host], implicit: false });
    return this.destinations.get(
      domain,
      async () => resolveDestination(domain, { dns: this.deps.dns, random: this.deps.random, ownDomains: await this.ourDomains() }),
      (dest) => dest.kind !== 'temporary',
    );
  }

  /** Names that are this server: never a destination (SPEC §4). */
  private ourDomains(): Promise<string[]> {
    return this.ownDomains.get('own', async () => {
      const { server, inbound } = this.deps.config;
      const rows: { name: string; return_path_verified: unknown }[] = await this.deps.db('domains').select('name', 'return_path_verified');
      const verified = rows.filter((d) => bool(d.return_path_verified)).map((d) => `bounces.${d.name}`);
      return [server.hostname, inbound.returnPathDomain, ...verified];
    });
  }

  private sendingDomain(name: string): Promise<SendingDomain> {
    return this.domains.get(name, async () => {
      const row = await domainsRepo.byName(this.deps.db, name);
      if (!row) throw new Error(`sending domain ${name} is not configured`);
      return {
        key: { domain: row.name, selector: row.selector, privateKeyPem: row.dkim_private_key },
        // SPF aligns for DMARC only when bounces.<domain> is ours in DNS (its return_path record verified).
        returnPathDomain: row.return_path_verified ? `bounces.${row.name}` : this.deps.config.inbound.returnPathDomain,
      };
    });
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
