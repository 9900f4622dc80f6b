import { randomBytes } from 'node:crypto';
import { conflict, invalid } from '../core/errors.ts';
import type { Clock, Logger } from '../core/ports.ts';
import type { Db, Tx } from '../store/db.ts';
import { domainsRepo } from '../store/domains.ts';
import { DuplicateKeyError } from '../store/errors.ts';
import type { GroupCommitter } from '../store/groupCommit.ts';
import { idempotencyRepo } from '../store/idempotency.ts';
import { messagesRepo, type RecipientRow } from '../store/messages.ts';
import { suppressionsRepo } from '../store/suppressions.ts';
import { usageRepo } from '../store/usage.ts';
import type { Principal } from '../tenancy/principal.ts';
import { formatMailbox } from './address.ts';
import { storeContent } from './content.ts';
import { IDEMPOTENCY_WINDOW_MS, type IdempotencyRequest } from './idempotency.ts';
import type { RecipientStatus } from './status.ts';
import type { NormalisedMessage } from './validate.ts';

export interface AcceptResult {
  status: number;
  body: { id: number; stream: string };
  replayed: boolean;
}

interface Replay {
  replay: AcceptResult;
}

export interface AcceptDeps {
  db: Db;
  committer: GroupCommitter;
  clock: Clock;
  log: Logger;
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * "Accept a message", shared by the HTTP API and SMTP submission. Each step is a guard that can
 * stop the message; the writes happen in one group-committed transaction, so the caller answers
 * 201 (or 250) only once the message is durable.
 */
export class AcceptService {
  constructor(private readonly deps: AcceptDeps) {}

  async accept(principal: Principal, message: NormalisedMessage, idempotency?: IdempotencyRequest, source: 'api' | 'smtp' = 'api'): Promise<AcceptResult> {
    await this.checkSendingDomain(principal, message.from.domain);
    try {
      return await this.deps.committer.run((tx) => this.write(tx, principal, message, idempotency, source));
    } catch (err) {
      // Another process committed the same Idempotency-Key between our read and our insert.
      if (idempotency && err instanceof DuplicateKeyError) {
        const stored = await this.stored(this.deps.db, principal, idempotency);
        if (stored) return stored.replay;
      }
      throw err;
    }
  }

  /** The stored answer for a retried request, checked before anything else about it. */
  async replay(principal: Principal, idempotency: IdempotencyRequest): Promise<AcceptResult | null> {
    return (await this.stored(this.deps.db, principal, idempotency))?.replay ?? null;
  }

  /** Why this key may not send from `domain`, or null when it may; each front end words the refusal. */
  async sendingDomainProblem(principal: Principal, domain: string): Promise<string | null> {
    if (principal.domain !== null && principal.domain !== domain) return `this API key may only send from ${principal.domain}, not ${domain}`;
    const row = await domainsRepo.byName(this.deps.db, domain);
    if (!row || row.workspace_id !== principal.workspaceId) return `domain ${domain} is not a domain of this workspace; add and verify it first`;
    if (row.status !== 'verified') return `domain ${domain} is not verified; publish its DNS records and verify it`;
    return null;
  }

  private async checkSendingDomain(principal: Principal, domain: string): Promise<void> {
    const problem = await this.sendingDomainProblem(principal, domain);
    if (problem !== null) throw invalid(`Field \`from\`: ${problem}`);
  }

  /** The stored answer for this key, or a 409 when the key was used for another body. */
  private async stored(db: Db | Tx, principal: Principal, idem: IdempotencyRequest): Promise<Replay | null> {
    const row = await idempotencyRepo.find(db, principal.keyId, idem.key, this.deps.clock.now() - IDEMPOTENCY_WINDOW_MS);
    if (!row) return null;
    if (row.request_hash !== idem.hash) throw conflict('Idempotency-Key was already used with a different request');
    return { replay: { status: row.response_status, body: JSON.parse(row.response_body), replayed: true } };
  }

  private async write(tx: Tx, principal: Principal, m: NormalisedMessage, idem: IdempotencyRequest | undefined, source: 'api' | 'smtp'): Promise<AcceptResult> {
    if (idem) {
      const stored = await this.stored(tx, principal, idem);
      if (stored) return stored.replay;
    }
    const now = this.deps.clock.now();
    const suppressed = await suppressionsRepo.suppressedAmong(tx, principal.workspaceId, m.stream, m.recipients.map((r) => r.address));
    const statusOf = (address: string): RecipientStatus =>
      suppressed.has(address.toLowerCase()) ? 'suppressed' : m.scheduledAt !== null ? 'scheduled' : 'queued';
    const statuses = m.recipients.map((r) => statusOf(r.address));

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
    const id = await messagesRepo.insert(
      tx,
      {
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
      m.messageId === undefined ? (newId) => `<${newId}.${randomBytes(8).toString('hex')}@${m.from.domain}>` : undefined,
    );
    await usageRepo.add(tx, principal.workspaceId, utcDay(now), m.stream, statuses.filter((s) => s !== 'suppressed').length);

    const result: AcceptResult = { status: 201, body: { id, stream: m.stream }, replayed: false };
    if (idem) {
      await idempotencyRepo.store(
        tx,
        { api_key_id: principal.keyId, idem_key: idem.key, request_hash: idem.hash, response_status: 201, response_body: JSON.stringify(result.body), created_at: now },
        now - IDEMPOTENCY_WINDOW_MS,
      );
    }
    this.deps.log.info({ phase: 'accept', email_id: id, recipients: m.recipients.length, suppressed: suppressed.size, source }, 'accepted');
    return result;
  }
}
