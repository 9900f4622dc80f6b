import { describe, expect, it } from 'vitest';
import { readAfter, runAtomically, runTogether, type Db, type Tx } from '../../src/store/db.ts';
import { usageRepo } from '../../src/store/usage.ts';
import { messageWith, migratedStore } from '../helpers/db.ts';
import { STORES } from '../helpers/stores.ts';

const at = 1_700_000_000_000;

const message = (workspaceId: number, id: number) => ({
  id,
  workspace_id: workspaceId,
  api_key_id: null,
  domain: 'acme.test',
  stream: 'transactional',
  source: 'api',
  status: 'queued',
  from_header: 'a@acme.test',
  from_address: 'a@acme.test',
  subject: `message ${id}`,
  envelope: '{}',
  message_id_header: `<${id}@acme.test>`,
  created_at: at,
  scheduled_at: null,
});

const recipient = (workspaceId: number, messageId: number, i: number) => ({
  message_id: messageId,
  workspace_id: workspaceId,
  address: `r${i}@example.org`,
  domain: 'example.org',
  kind: 'to',
  status: 'queued',
  attempts: 0,
  due_at: at,
  first_due_at: at,
  created_at: at,
  updated_at: at,
});

/** The statements that reached the database, without BEGIN and COMMIT (unless `all`). */
function watch(db: Db, all = false): string[] {
  const seen: string[] = [];
  db.on('query', (q: { sql: string }) => {
    if (all || !/^(begin|commit)/i.test(q.sql.trim())) seen.push(q.sql);
  });
  return seen;
}

describe.each(STORES)('writes sent together (%s)', (kind) => {
  it('sends rows that reference each other and a counter upsert in one statement on PostgreSQL, and every write lands', async () => {
    const { db } = await migratedStore(kind);
    const { workspaceId } = await messageWith(db, ['queued']);
    const seen = watch(db);
    await db.transaction((tx: Tx) =>
      runTogether(tx, [
        tx('messages').insert([message(workspaceId, 9001), message(workspaceId, 9002)]),
        tx('recipients').insert([recipient(workspaceId, 9001, 0), recipient(workspaceId, 9002, 1), recipient(workspaceId, 9002, 2)]),
        usageRepo.addition(tx, workspaceId, '2026-11-24', 'transactional', 3)!,
      ]),
    );
    expect(seen).toHaveLength(kind === 'pg' ? 1 : 3);
    const rows = await db('recipients').whereIn('message_id', [9001, 9002]).orderBy('address').select('message_id', 'address');
    expect(rows).toStrictEqual([
      { message_id: 9001, address: 'r0@example.org' },
      { message_id: 9002, address: 'r1@example.org' },
      { message_id: 9002, address: 'r2@example.org' },
    ]);
    expect(await usageRepo.list(db, workspaceId, '2026-11-24', '2026-11-24')).toStrictEqual([{ day: '2026-11-24', stream: 'transactional', count: 3 }]);
  });

  it('fails as a whole when one write breaks a constraint, and leaves nothing behind', async () => {
    const { db } = await migratedStore(kind);
    const { workspaceId } = await messageWith(db, ['queued']);
    const failed = db.transaction((tx: Tx) =>
      runTogether(tx, [tx('messages').insert(message(workspaceId, 9101)), tx('recipients').insert(recipient(workspaceId, 9999, 0))]),
    );
    await expect(failed).rejects.toThrow();
    expect(await db('messages').where({ id: 9101 }).first()).toBeUndefined();
  });

  it('splits the writes into several statements when their parameters would exceed the bound', async () => {
    const { db } = await migratedStore(kind);
    const { workspaceId } = await messageWith(db, ['queued']);
    const ids = Array.from({ length: 2_400 }, (_, i) => 10_000 + i);
    const seen = watch(db);
    await db.transaction((tx: Tx) =>
      runTogether(
        tx,
        // 15 parameters a message: 16 statements of 150 rows, 36,000 parameters in all.
        Array.from({ length: 16 }, (_, s) => tx('messages').insert(ids.slice(s * 150, (s + 1) * 150).map((id) => message(workspaceId, id)))),
      ),
    );
    expect(seen).toHaveLength(kind === 'pg' ? 2 : 16);
    expect(Number((await db('messages').whereIn('id', [ids[0]!, ids[2_399]!]).count({ n: '*' }).first())!.n)).toBe(2);
  });

  it('commits writes outside a transaction as one statement on PostgreSQL, with no BEGIN or COMMIT, and all or none', async () => {
    const { db } = await migratedStore(kind);
    const { workspaceId } = await messageWith(db, ['queued']);
    const seen = watch(db, true);
    await runAtomically(db, [db('messages').insert(message(workspaceId, 9201)), db('recipients').insert(recipient(workspaceId, 9201, 0))]);
    expect(seen.length).toBe(kind === 'pg' ? 1 : 4);
    expect(await db('recipients').where({ message_id: 9201 }).select('address')).toStrictEqual([{ address: 'r0@example.org' }]);

    const failed = runAtomically(db, [db('messages').insert(message(workspaceId, 9202)), db('recipients').insert(recipient(workspaceId, 9999, 0))]);
    await expect(failed).rejects.toThrow();
    expect(await db('messages').where({ id: 9202 }).first()).toBeUndefined();
  });

  it('reads in the same statement as the writes before it on PostgreSQL, and the writes land', async () => {
    const { db } = await migratedStore(kind);
    const { workspaceId, messageId } = await messageWith(db, ['queued']);
    const seen = watch(db);
    const rows = await db.transaction((tx: Tx) =>
      readAfter<{ id: number; subject: string }>(
        tx,
        [tx('messages').where({ id: messageId }).update({ subject: 'changed' })],
        tx('workspaces').where({ id: workspaceId }).select('id'),
      ),
    );
    expect(rows.map((r) => Number(r.id))).toStrictEqual([workspaceId]);
    expect(seen).toHaveLength(kind === 'pg' ? 1 : 2);
    expect((await db('messages').where({ id: messageId }).first()).subject).toBe('changed');
  });
});
