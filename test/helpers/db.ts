import { onTestFinished } from 'vitest';
import { createDb, insertedId, type Db } from '../../src/store/db.ts';
import { deriveMessageStatuses } from '../../src/store/messageStatus.ts';
import { messagesRepo, type RecipientRow } from '../../src/store/messages.ts';
import { migrate } from '../../src/store/migrate.ts';
import { workspaces } from '../../src/store/workspaces.ts';
import type { RecipientStatus } from '../../src/messages/status.ts';
import { testConfig } from './server.ts';
import { scratchStore, type StoreKind } from './stores.ts';

/**
 * A scratch database and a way to open connections (pools) to it, as separate processes
 * would; all closed and dropped after the test.
 */
export async function openStore(kind: StoreKind): Promise<{ open(): Db }> {
  const store = await scratchStore(kind);
  const config = testConfig(store);
  const dbs: Db[] = [];
  const open = () => {
    const db = createDb(config.database);
    dbs.push(db);
    return db;
  };
  onTestFinished(async () => {
    for (const db of dbs) await db.destroy();
    await store.drop();
  });
  return { open };
}

/** A migrated scratch database, as `openStore`. */
export async function migratedStore(kind: StoreKind): Promise<{ db: Db; open(): Db }> {
  const { open } = await openStore(kind);
  const db = open();
  await migrate(db);
  return { db, open };
}

/** A workspace and a message whose recipients have these statuses; returns their ids. */
export async function messageWith(db: Db, statuses: RecipientStatus[], at = 1_700_000_000_000): Promise<{ workspaceId: number; messageId: number; recipientIds: number[] }> {
  const ws = (await workspaces.byName(db, 'w')) ?? (await workspaces.insert(db, { name: 'w', plan: 'free', rate_per_minute: 10, rate_per_hour: 100, created_at: at }));
  const recipients = statuses.map((status, i): Omit<RecipientRow, 'id' | 'message_id'> => ({
    workspace_id: ws.id,
    address: `r${i}@example.org`,
    domain: 'example.org',
    kind: 'to',
    status,
    attempts: 0,
    last_response: null,
    last_mx: null,
    due_at: at,
    first_due_at: at,
    lease_owner: status === 'sending' ? 'w1' : null,
    lease_until: status === 'sending' ? at + 60_000 : null,
    created_at: at,
    updated_at: at,
  }));
  // Rows in any status, as delivery and reports leave them: new messages are accepted only with
  // queued, scheduled or suppressed recipients, so these are written directly.
  const messageId = await db.transaction(async (tx) => {
    const [inserted] = await tx('messages')
      .insert({
        workspace_id: ws.id,
        api_key_id: null,
        domain: 'acme.test',
        stream: 'transactional',
        source: 'api',
        from_header: 'a@acme.test',
        from_address: 'a@acme.test',
        subject: 's',
        envelope: '{}',
        message_id_header: '<m@acme.test>',
        status: 'queued',
        created_at: at,
        scheduled_at: null,
      })
      .returning('id');
    const id = insertedId(inserted);
    await tx('recipients').insert(recipients.map((r) => ({ ...r, message_id: id })));
    await deriveMessageStatuses(tx, [id]);
    return id;
  });
  const rows = await messagesRepo.recipients(db, messageId);
  return { workspaceId: ws.id, messageId, recipientIds: rows.map((r) => r.id) };
}

/**
 * Resolves once some session of this database waits for a lock: the point where a concurrent
 * transaction is known to be blocked behind the one the test holds open.
 */
export async function someoneWaitsForLock(observer: Db, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await observer.raw(
      "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
    );
    if (rows[0].n > 0) return;
    if (Date.now() > deadline) throw new Error('no session started waiting for a lock');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
