import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { source } from '../../src/store/migrate.ts';
import { messagesRepo } from '../../src/store/messages.ts';
import { openStore } from '../helpers/db.ts';
import { STORES } from '../helpers/stores.ts';

const AT = 1_700_000_000_000;
const SEARCH = '019_message_search';

const applied = async (db: Knex) =>
  ((await db.migrate.list({ migrationSource: source })) as [({ name: string } | string)[], unknown[]])[0].map((m) => (typeof m === 'string' ? m : m.name));

/** Migrations undone one by one, newest first, until the search's own has been undone. */
async function downThroughSearch(db: Knex): Promise<void> {
  while ((await applied(db)).includes(SEARCH)) await db.migrate.down({ migrationSource: source });
}

describe.each(STORES)('the search indexes added to stored messages (%s)', (kind) => {
  it('indexes the tags, metadata and subjects of messages written before it, and going back removes them', async () => {
    const { open } = await openStore(kind);
    const db = open();
    await db.migrate.latest({ migrationSource: source });
    await downThroughSearch(db);
    const [ws] = await db('workspaces').insert({ name: 'w', plan: 'free', rate_per_minute: 10, rate_per_hour: 100, created_at: AT }).returning('id');
    const workspaceId = typeof ws === 'object' ? ws.id : ws;
    const message = (n: number, envelope: object) => ({
      workspace_id: workspaceId,
      api_key_id: null,
      domain: 'acme.test',
      stream: 'transactional',
      status: 'delivered',
      source: 'api',
      from_header: 'News <News@acme.test>',
      from_address: 'News@acme.test',
      subject: n === 1 ? 'Your Fall receipt' : 'Welcome',
      envelope: JSON.stringify({ to: ['u@example.org'], cc: [], bcc: [], reply_to: [], ...envelope }),
      message_id_header: `<${n}@acme.test>`,
      created_at: AT + n,
      scheduled_at: null,
    });
    const ids = (
      await db('messages')
        .insert([
          message(1, {
            tags: [
              { name: 'kind', value: 'receipt' },
              { name: 'kind', value: 'receipt' },
            ],
            metadata: { user: 'u1' },
          }),
          // Written before messages had metadata: no key at all.
          message(2, { tags: [] }),
        ])
        .returning('id')
    ).map((r: number | { id: number }) => (typeof r === 'object' ? r.id : r));

    await db.migrate.latest({ migrationSource: source });
    expect(await db('message_labels').orderBy(['kind', 'name']).select('message_id', 'workspace_id', 'kind', 'name', 'value')).toStrictEqual([
      { message_id: ids[0], workspace_id: workspaceId, kind: 'metadata', name: 'user', value: 'u1' },
      { message_id: ids[0], workspace_id: workspaceId, kind: 'tag', name: 'kind', value: 'receipt' },
      { message_id: ids[0], workspace_id: workspaceId, kind: 'tag_name', name: 'kind', value: '' },
    ]);
    const list = (f: object) => messagesRepo.list(db, { workspaceId, limit: 10, ...f }).then((rows) => rows.map((r) => r.id));
    expect(await list({ labels: [{ kind: 'tag_name', name: 'kind', value: '' }] })).toStrictEqual([ids[0]]);
    expect(await list({ subject: 'fall rec' })).toStrictEqual([ids[0]]);
    expect(await list({ from: 'news@acme.test' })).toStrictEqual([ids[1], ids[0]]);

    await downThroughSearch(db);
    expect(await db.schema.hasTable('message_labels')).toBe(false);
    // The messages themselves are untouched, and can still be written.
    expect(await db('messages').orderBy('id').pluck('subject')).toStrictEqual(['Your Fall receipt', 'Welcome']);
    await db('messages').insert(message(3, { tags: [] }));
    await db.migrate.latest({ migrationSource: source });
    expect(await list({ subject: 'welcome' })).toHaveLength(2);
  });
});
