import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { source } from '../../src/store/migrate.ts';
import { messagesRepo } from '../../src/store/messages.ts';
import { openStore } from '../helpers/db.ts';
import { STORES } from '../helpers/stores.ts';

const AT = 1_700_000_000_000;
const MOVE = '012_message_contents';

/** Migrations undone one by one, newest first, until the body move itself has been undone. */
async function downThroughMove(db: Knex): Promise<void> {
  for (;;) {
    const [completed] = (await db.migrate.list({ migrationSource: source })) as [({ name: string } | string)[], unknown[]];
    if (!completed.some((m) => (typeof m === 'string' ? m : m.name) === MOVE)) return;
    await db.migrate.down({ migrationSource: source });
  }
}

describe.each(STORES)('bodies moved out of the messages rows (%s)', (kind) => {
  it('carries every stored body over, a pruned one stays pruned, and going back restores the column', async () => {
    const { open } = await openStore(kind);
    const db = open();
    await db.migrate.latest({ migrationSource: source });
    await downThroughMove(db);
    const [ws] = await db('workspaces').insert({ name: 'w', plan: 'free', rate_per_minute: 10, rate_per_hour: 100, created_at: AT }).returning('id');
    const message = (n: number, content: string | null) => ({
      workspace_id: typeof ws === 'object' ? ws.id : ws,
      api_key_id: null,
      domain: 'acme.test',
      stream: 'transactional',
      status: 'delivered',
      source: 'api',
      from_header: 'a@acme.test',
      from_address: 'a@acme.test',
      subject: `message ${n}`,
      content,
      envelope: '{}',
      message_id_header: `<${n}@acme.test>`,
      created_at: AT,
      scheduled_at: null,
    });
    const ids = (
      await db('messages')
        .insert([message(1, '{"kind":"fields","text":"one"}'), message(2, null)])
        .returning('id')
    ).map((r: number | { id: number }) => (typeof r === 'object' ? r.id : r));

    await db.migrate.latest({ migrationSource: source });
    expect(await db('message_contents').orderBy('message_id').select('message_id', 'content')).toStrictEqual([
      { message_id: ids[0], content: '{"kind":"fields","text":"one"}' },
    ]);
    expect(Object.keys(await db('messages').first())).not.toContain('content');
    expect((await messagesRepo.byId(db, ids[0]!))?.content).toBe('{"kind":"fields","text":"one"}');
    expect((await messagesRepo.byId(db, ids[1]!))?.content).toBeNull();

    await downThroughMove(db);
    expect(await db('messages').orderBy('id').pluck('content')).toStrictEqual(['{"kind":"fields","text":"one"}', null]);
  });
});
