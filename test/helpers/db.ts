import { onTestFinished } from 'vitest';
import { createDb, insertedId, type Db } from '../../src/store/db.ts';
import { deriveMessageStatuses } from '../../src/store/messageStatus.ts';
import type { RecipientRow } from '../../src/store/messages.ts';
import { migrate } from '../../src/store/migrate.ts';
import { workspaces } from '../../src/store/workspaces.ts';
import type { RecipientStatus } from '../../src/messages/status.ts';
import { testConfig } from './server.ts';
import { scratchStore, type StoreKind } from './stores.ts';

/**
 * A scratch database, empty unless `empty` is false, and a way to open connections (pools) to
 * it, as separate processes would; all closed and dropped after the test.
 */
export async function openStore(kind: StoreKind, options: { empty: boolean } = { empty: true }): Promise<{ open(): Db }> {
  const store = await scratchStore(kind, options);
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
  const { open } = await openStore(kind, { empty: false });
  const db = open();
  await migrate(db);
  return { db, open };
}

/** A workspace and a message whose recipients have these statuses; returns their ids. */
export async function messageWith(
  db: Db,
  statuses: RecipientStatus[],
  at = 1_700_000_000_000,
): Promise<{ workspaceId: number; messageId: number; recipientIds: number[] }> {
  const { workspaceId, messages } = await messagesWith(db, [statuses], at);
  return { workspaceId, ...messages[0]! };
}

/** A recipient to create: its status, and when it is due (`at` unless given). */
export type RecipientSpec = RecipientStatus | { status: RecipientStatus; dueAt: number };

/** A workspace and one message per list of recipients, in one transaction; returns their ids in order. */
export async function messagesWith(
  db: Db,
  messages: RecipientSpec[][],
  at = 1_700_000_000_000,
): Promise<{ workspaceId: number; messages: { messageId: number; recipientIds: number[] }[] }> {
  const ws = (await workspaces.byName(db, 'w')) ?? (await workspaces.insert(db, { name: 'w', plan: 'free', rate_per_minute: 10, rate_per_hour: 100, created_at: at }));
  const recipientRow = (spec: RecipientSpec, i: number): Omit<RecipientRow, 'id' | 'message_id'> => {
    const { status, dueAt } = typeof spec === 'string' ? { status: spec, dueAt: at } : spec;
    return {
      workspace_id: ws.id,
      address: `r${i}@example.org`,
      domain: 'example.org',
      kind: 'to',
      status,
      attempts: 0,
      last_response: null,
      last_mx: null,
      due_at: dueAt,
      first_due_at: dueAt,
      lease_owner: status === 'sending' ? 'w1' : null,
      lease_until: status === 'sending' ? dueAt + 60_000 : null,
      created_at: at,
      updated_at: at,
    };
  };
  // In bulk, then derived as every repository derives: hundreds of messages cost a few statements.
  const made = await db.transaction(async (tx) => {
    const row = {
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
    };
    const messageIds: number[] = [];
    for (let i = 0; i < messages.length; i += 200) {
      const ids = (
        await tx('messages')
          .insert(messages.slice(i, i + 200).map(() => row))
          .returning('id')
      ).map(insertedId);
      messageIds.push(...ids.sort((a, b) => a - b));
    }
    const recipients = messages.flatMap((specs, m) => specs.map((spec, i) => ({ ...recipientRow(spec, i), message_id: messageIds[m]! })));
    const recipientIds: { id: number; message_id: number }[] = [];
    for (let i = 0; i < recipients.length; i += 200)
      recipientIds.push(
        ...(await tx('recipients')
          .insert(recipients.slice(i, i + 200))
          .returning(['id', 'message_id'])),
      );
    await deriveMessageStatuses(tx, messageIds);
    const byMessage = new Map<number, number[]>(messageIds.map((id) => [id, []]));
    for (const r of recipientIds.sort((a, b) => a.id - b.id)) byMessage.get(r.message_id)!.push(r.id);
    return messageIds.map((messageId) => ({ messageId, recipientIds: byMessage.get(messageId)! }));
  });
  return { workspaceId: ws.id, messages: made };
}

/**
 * Resolves once some session of this database waits for a lock: the point where a concurrent
 * transaction is known to be blocked behind the one the test holds open.
 */
export async function someoneWaitsForLock(observer: Db, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await observer.raw("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'");
    if (rows[0].n > 0) return;
    if (Date.now() > deadline) throw new Error('no session started waiting for a lock');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
