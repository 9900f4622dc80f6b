import { Batcher } from '../core/batcher.ts';
import { conflict, invalid, ServiceError } from '../core/errors.ts';
import type { Clock, Logger } from '../core/ports.ts';
import { randomHex } from '../core/random.ts';
import { inTransaction, type Conn, type Db, type Tx } from '../store/db.ts';
import { domainsRepo } from '../store/domains.ts';
import { DuplicateKeyError } from '../store/errors.ts';
import type { GroupCommitter } from '../store/groupCommit.ts';
import { idempotencyRepo } from '../store/idempotency.ts';
import { messagesRepo, type PlannedMessage, type RecipientRow } from '../store/messages.ts';
import { suppressionsRepo } from '../store/suppressions.ts';
import { usageRepo } from '../store/usage.ts';
import type { Principal } from '../tenancy/principal.ts';
import { CHANGE_VISIBLE_WITHIN_MS, TtlCache } from '../tenancy/ttl-cache.ts';
import { formatMailbox } from './address.ts';
import { storeContent, type MessageContent } from './content.ts';
import { IDEMPOTENCY_WINDOW_MS, type IdempotencyRequest } from './idempotency.ts';
import { labelsOf } from './search.ts';
import type { RecipientStatus } from './status.ts';
import type { NormalisedMessage } from './validate.ts';

export interface Accepted {
  id: number;
  stream: string;
}

export interface AcceptResult<Body = Accepted> {
  status: number;
  body: Body;
  replayed: boolean;
}

/** The answer to `POST /emails/batch`: each message's id and stream, in the order given. */
export type BatchBody = { data: Accepted[] };

/** A stored answer: its body is the one given when the key was first used. */
interface Replay<Body> {
  replay: AcceptResult<Body>;
}

/** A message waiting for the next accepting batch. */
interface Waiting {
  principal: Principal;
  message: NormalisedMessage;
  source: 'api' | 'smtp';
}

/**
 * Accepting jobs run last in their shared commit: they end with the workspace's daily usage
 * row, which every process and commit lane updates, so its lock is held only until the commit.
 */
const LAST = { last: true };
/** Messages of one workspace and stream share a suppression query and a usage counter. */
const group = (w: Waiting) => `${w.principal.workspaceId}:${w.message.stream}`;

/** Messages written by one job; the group committer's own batch bound is of the same order. */
const MAX_BATCH = 256;

export interface AcceptDeps {
  db: Db;
  committer: GroupCommitter;
  clock: Clock;
  log: Logger;
  /** Refuses content too costly to render per recipient (the tracked-link and rendered-size caps). */
  checkContent?: (content: MessageContent) => Promise<void>;
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Runs a check of a batch's item; a refusal names the item, counted from 0. */
export async function atItem<T>(index: number, check: () => T | Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'VALIDATION') throw invalid(`Item ${index}: ${err.message}`);
    throw err;
  }
}

/**
 * "Accept a message", shared by the HTTP API and SMTP submission. Each step is a guard that can
 * stop the message; the writes happen in one group-committed transaction, so the caller answers
 * 201 (or 250) only once the message is durable.
 */
export class AcceptService {
  /** Verified sending domains seen recently, by name, with their workspace. */
  private readonly verified = new TtlCache<string, number>(CHANGE_VISIBLE_WITHIN_MS);
  /**
   * Messages without an Idempotency-Key that arrive while a commit is being prepared are
   * written together by one job of that commit: one suppression query per workspace and
   * stream, one multi-row insert for the messages and one for their recipients, one usage
   * update. The job takes its batch when the commit runs it, so everything that arrived
   * meanwhile goes in. If the batch fails, each message is written on its own, so one bad
   * message costs the others nothing.
   */
  private readonly batcher: Batcher<Waiting, AcceptResult>;

  constructor(private readonly deps: AcceptDeps) {
    this.batcher = new Batcher({ name: 'the accepting queue', maxBatch: MAX_BATCH, retryAlone: true, write: (batch) => this.commitBatch(() => batch.take()) });
  }

  async accept(principal: Principal, message: NormalisedMessage, idempotency?: IdempotencyRequest, source: 'api' | 'smtp' = 'api'): Promise<AcceptResult> {
    await this.checkSendingDomain(principal, message.from.domain);
    await this.deps.checkContent?.(message.content);
    if (!idempotency) return this.batcher.add({ principal, message, source });
    try {
      return await this.deps.committer.run((tx) => this.writeIdempotent(tx, [{ principal, message, source }], idempotency, ([one]) => one!), LAST);
    } catch (err) {
      // Another process committed the same Idempotency-Key between our read and our insert.
      if (err instanceof DuplicateKeyError) {
        const stored = await this.stored<Accepted>(this.deps.db, principal, idempotency);
        if (stored) return stored.replay;
      }
      throw err;
    }
  }

  /**
   * Messages accepted together (`POST /emails/batch`): every one is checked first, a refusal
   * naming its index, then all are written by one job of a shared commit, so either all are
   * accepted or none is. One Idempotency-Key covers the batch.
   */
  async acceptBatch(principal: Principal, messages: NormalisedMessage[], idempotency?: IdempotencyRequest): Promise<AcceptResult<BatchBody>> {
    const checkedDomains = new Set<string>();
    for (const [i, message] of messages.entries()) {
      await atItem(i, async () => {
        if (!checkedDomains.has(message.from.domain)) await this.checkSendingDomain(principal, message.from.domain);
        checkedDomains.add(message.from.domain);
        await this.deps.checkContent?.(message.content);
      });
    }
    const batch = messages.map((message): Waiting => ({ principal, message, source: 'api' }));
    const answer = (results: AcceptResult[]): AcceptResult<BatchBody> => ({ status: 201, body: { data: results.map((r) => r.body) }, replayed: false });
    if (!idempotency) return answer(await this.commitBatch(() => batch));
    try {
      return await this.deps.committer.run((tx) => this.writeIdempotent(tx, batch, idempotency, answer), LAST);
    } catch (err) {
      if (err instanceof DuplicateKeyError) {
        const stored = await this.stored<BatchBody>(this.deps.db, principal, idempotency);
        if (stored) return stored.replay;
      }
      throw err;
    }
  }

  /** Writes what is queued, then refuses new messages (the process is stopping). */
  close(): Promise<void> {
    return this.batcher.close();
  }

  /** One job of a shared commit writing the batch `take` gives when the commit runs it. */
  private commitBatch(take: () => Waiting[]): Promise<AcceptResult[]> {
    // On PostgreSQL the batch commits on its own: one statement when it fits in one, with no
    // BEGIN and COMMIT round trips (a transaction only when it updates several usage counters).
    return this.deps.committer.runOwnIfCheaper((conn) => {
      const taken = take();
      return new Set(taken.map(group)).size > 1 && !inTransaction(conn) ? conn.transaction((tx) => this.writeMany(tx, taken)) : this.writeMany(conn, taken);
    }, LAST);
  }

  /** Commits and jobs of the committer accepting writes through, to see how well they are shared. */
  commitStats(): { commits: number; jobs: number } {
    return this.deps.committer.stats();
  }

  /** The stored answer for a retried request, checked before anything else about it. */
  async replay<Body = Accepted>(principal: Principal, idempotency: IdempotencyRequest): Promise<AcceptResult<Body> | null> {
    return (await this.stored<Body>(this.deps.db, principal, idempotency))?.replay ?? null;
  }

  /** A domain removed or found unverified by this process: the next message from it is checked anew. */
  forgetDomain(name: string): void {
    this.verified.delete(name);
  }

  /** Why this key may not send from `domain`, or null when it may; each front end words the refusal. */
  async sendingDomainProblem(principal: Principal, domain: string): Promise<string | null> {
    if (principal.domain !== null && principal.domain !== domain) return `this API key may only send from ${principal.domain}, not ${domain}`;
    if (this.verified.get(domain) === principal.workspaceId) return null;
    const row = await domainsRepo.byName(this.deps.db, domain);
    if (!row || row.workspace_id !== principal.workspaceId) return `domain ${domain} is not a domain of this workspace; add and verify it first`;
    if (row.status !== 'verified') return `domain ${domain} is not verified; publish its DNS records and verify it`;
    this.verified.set(domain, row.workspace_id);
    return null;
  }

  private async checkSendingDomain(principal: Principal, domain: string): Promise<void> {
    const problem = await this.sendingDomainProblem(principal, domain);
    if (problem !== null) throw invalid(`Field \`from\`: ${problem}`);
  }

  /** The stored answer for this key, or a 409 when the key was used for another body. */
  private async stored<Body>(db: Db | Tx, principal: Principal, idem: IdempotencyRequest): Promise<Replay<Body> | null> {
    const row = await idempotencyRepo.find(db, principal.keyId, idem.key, this.deps.clock.now() - IDEMPOTENCY_WINDOW_MS);
    if (!row) return null;
    if (row.request_hash !== idem.hash) throw conflict('Idempotency-Key was already used with a different request');
    return { replay: { status: row.response_status, body: JSON.parse(row.response_body), replayed: true } };
  }

  /** Given the database rather than a transaction (PostgreSQL), the batch is of one group. */
  private async writeMany(tx: Conn, batch: Waiting[]): Promise<AcceptResult[]> {
    if (batch.length === 0) return [];
    const now = this.deps.clock.now();
    const suppressed = new Map<string, Set<string>>();
    const byGroup = new Map<string, { workspaceId: number; stream: NormalisedMessage['stream']; addresses: Set<string> }>();
    for (const w of batch) {
      const g = byGroup.get(group(w)) ?? { workspaceId: w.principal.workspaceId, stream: w.message.stream, addresses: new Set<string>() };
      byGroup.set(group(w), g);
      for (const r of w.message.recipients) g.addresses.add(r.address);
    }
    // On PostgreSQL one group's suppressions come with the message ids, in one round trip.
    let drawn: number[] | undefined;
    const [only] = byGroup.values();
    if (byGroup.size === 1) {
      const ahead = await messagesRepo.drawIdsWithSuppressed(tx, batch.length, only!.workspaceId, only!.stream, [...only!.addresses]);
      drawn = ahead?.ids;
      if (ahead) suppressed.set(group(batch[0]!), ahead.suppressed);
    }
    for (const [key, g] of drawn ? [] : byGroup) {
      const found = new Set<string>();
      const addresses = [...g.addresses];
      for (let i = 0; i < addresses.length; i += 500) {
        for (const a of await suppressionsRepo.suppressedAmong(tx, g.workspaceId, g.stream, addresses.slice(i, i + 500))) found.add(a);
      }
      suppressed.set(key, found);
    }

    const usage = new Map<string, { workspaceId: number; stream: string; count: number }>();
    const planned = batch.map((w) => {
      const s = suppressed.get(group(w))!;
      const row = this.plan(w.principal, w.message, (address) => s.has(address.toLowerCase()), now, w.source);
      const u = usage.get(group(w)) ?? { workspaceId: w.principal.workspaceId, stream: w.message.stream, count: 0 };
      usage.set(group(w), u);
      u.count += row.sending;
      return row;
    });
    // In one order, so two processes' commits lock the usage rows they share in the same order.
    const counts = [...usage.values()].sort((a, b) => a.workspaceId - b.workspaceId || a.stream.localeCompare(b.stream));
    const add = (u: (typeof counts)[number]) => usageRepo.addition(tx, u.workspaceId, utcDay(now), u.stream, u.count);
    // A single counter row goes with the inserts (one round trip on PostgreSQL); several are
    // added one by one after them, keeping that order.
    const single = counts.length === 1 ? add(counts[0]!) : null;
    const ids = await messagesRepo.insertMany(tx, planned, single ? [single] : [], drawn);
    if (counts.length > 1) for (const u of counts) await add(u);
    return batch.map((w, i) => {
      this.deps.log.info(
        { phase: 'accept', email_id: ids[i], recipients: w.message.recipients.length, suppressed: w.message.recipients.length - planned[i].sending, source: w.source },
        'accepted',
      );
      return { status: 201, body: { id: ids[i], stream: w.message.stream }, replayed: false };
    });
  }

  /** The rows of one message; `isSuppressed` answers for each recipient. */
  private plan(principal: Principal, m: NormalisedMessage, isSuppressed: (address: string) => boolean, now: number, source: 'api' | 'smtp'): PlannedMessage {
    const statuses = m.recipients.map((r): RecipientStatus => (isSuppressed(r.address) ? 'suppressed' : m.scheduledAt !== null ? 'scheduled' : 'queued'));
    const due = m.scheduledAt ?? now;
    const recipients = m.recipients.map((r, i): Omit<RecipientRow, 'id' | 'message_id'> => ({
      workspace_id: principal.workspaceId,
      address: r.address,
      domain: r.domain,
      kind: r.kind,
      status: statuses[i],
      attempts: 0,
      last_response: null,
      last_mx: null,
      due_at: statuses[i] === 'suppressed' ? null : due,
      first_due_at: statuses[i] === 'suppressed' ? null : due,
      lease_owner: null,
      lease_until: null,
      created_at: now,
      updated_at: now,
    }));
    return {
      row: {
        workspace_id: principal.workspaceId,
        api_key_id: principal.keyId,
        domain: m.from.domain,
        stream: m.stream,
        source,
        from_header: formatMailbox(m.from),
        from_address: m.from.address,
        subject: m.subject,
        ...storeContent(m.content, m),
        message_id_header: m.messageId ?? '',
        created_at: now,
        scheduled_at: m.scheduledAt,
      },
      recipients,
      messageIdFor: m.messageId === undefined ? (newId) => `<${newId}.${randomHex(8)}@${m.from.domain}>` : undefined,
      sending: statuses.filter((s) => s !== 'suppressed').length,
      labels: labelsOf(m.tags, m.metadata),
    };
  }

  /**
   * Messages of one request with an Idempotency-Key (one, or a batch): the stored answer if the
   * key was used, else written with it; `answer` makes the request's answer of their results.
   */
  private async writeIdempotent<Body>(
    tx: Tx,
    batch: Waiting[],
    idem: IdempotencyRequest,
    answer: (results: AcceptResult[]) => AcceptResult<Body>,
  ): Promise<AcceptResult<Body>> {
    const principal = batch[0]!.principal;
    const stored = await this.stored<Body>(tx, principal, idem);
    if (stored) return stored.replay;
    const result = answer(await this.writeMany(tx, batch));
    const now = this.deps.clock.now();
    await idempotencyRepo.store(
      tx,
      { api_key_id: principal.keyId, idem_key: idem.key, request_hash: idem.hash, response_status: 201, response_body: JSON.stringify(result.body), created_at: now },
      now - IDEMPOTENCY_WINDOW_MS,
    );
    return result;
  }
}
