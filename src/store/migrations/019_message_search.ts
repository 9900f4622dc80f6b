import type { Knex } from 'knex';

/**
 * Searching messages (SPEC §15, `GET /emails`). Every filter has an index that returns its
 * matches newest first, so a page stops after its rows whether matches are common or rare:
 *
 * - `message_labels`: a message's tags and metadata, one row each, plus one `tag_name` row per
 *   distinct tag name (value '') so that `tag=name` is the same equality as `tag=name:value`. The
 *   index leads with (workspace_id, kind, name, value) and ends with message_id, so a search
 *   walks it from the newest match down; the primary key serves the check of a second label and
 *   the cascade when a message goes.
 * - `from`: an index on (workspace_id, lower(from_address), id).
 * - `created_after`/`created_before`: an index on (workspace_id, created_at, id), walked from the
 *   range's end (such a page is in created_at order, `messagesRepo.list`).
 * - `subject` contains: on SQLite, an FTS5 table with the trigram tokenizer over `messages.subject`
 *   (external content, kept by triggers), whose phrase queries match any substring of 3 or more
 *   characters without case; on PostgreSQL, a GIN index with `pg_trgm`'s trigram operators,
 *   which `ILIKE` uses. Creating the extension needs rights the database role may not have: then
 *   the migration goes on without the index and the same `ILIKE` scans (docs/SEARCH.md).
 *
 * SQLite drops a table's triggers with the table, so a later migration that rebuilds `messages`
 * must create the two triggers again.
 */
export async function up(knex: Knex): Promise<void> {
  const pg = knex.client.config.client === 'pg';
  await knex.schema.createTable('message_labels', (t) => {
    t.integer('message_id').notNullable().references('messages.id').onDelete('CASCADE');
    t.integer('workspace_id').notNullable();
    /** `tag` (name and value), `tag_name` (value ''), `metadata` (key and value). */
    t.string('kind', 8).notNullable();
    t.string('name', 64).notNullable();
    t.string('value', 256).notNullable();
    t.primary(['message_id', 'kind', 'name', 'value']);
    t.index(['workspace_id', 'kind', 'name', 'value', 'message_id'], 'message_labels_search');
  });
  await knex.raw('create index messages_workspace_from on messages (workspace_id, lower(from_address), id)');
  await knex.raw('create index messages_workspace_created on messages (workspace_id, created_at, id)');
  await backfillLabels(knex);
  if (pg) {
    if (await trigramsAvailable(knex)) await knex.raw('create index messages_subject_trgm on messages using gin (subject gin_trgm_ops)');
    return;
  }
  await knex.raw("create virtual table message_subjects using fts5(subject, content='messages', content_rowid='id', tokenize='trigram')");
  await knex.raw('create trigger messages_subject_insert after insert on messages begin insert into message_subjects (rowid, subject) values (new.id, new.subject); end');
  await knex.raw(
    "create trigger messages_subject_delete after delete on messages begin insert into message_subjects (message_subjects, rowid, subject) values ('delete', old.id, old.subject); end",
  );
  await knex.raw("insert into message_subjects (message_subjects) values ('rebuild')");
}

/** `pg_trgm`, created if the role may; a failed CREATE EXTENSION rolls back to its savepoint only. */
async function trigramsAvailable(knex: Knex): Promise<boolean> {
  try {
    await knex.transaction((tx) => tx.raw('create extension if not exists pg_trgm'));
  } catch {
    // No rights to create it (it needs CREATE on the database, or a superuser on PostgreSQL < 13).
  }
  const { rows } = (await knex.raw("select 1 from pg_extension where extname = 'pg_trgm'")) as { rows: unknown[] };
  return rows.length > 0;
}

/** The labels of messages written before this migration, read from their envelopes. */
async function backfillLabels(knex: Knex): Promise<void> {
  let after = 0;
  for (;;) {
    const rows: { id: number; workspace_id: number; envelope: string }[] = await knex('messages')
      .where('id', '>', after)
      .orderBy('id')
      .limit(1000)
      .select('id', 'workspace_id', 'envelope');
    if (rows.length === 0) return;
    after = rows[rows.length - 1]!.id;
    const labels = rows.flatMap((r) => {
      const env = JSON.parse(r.envelope) as { tags?: { name: string; value: string }[]; metadata?: Record<string, string> };
      return labelRows(r.id, r.workspace_id, env.tags ?? [], env.metadata ?? {});
    });
    for (let i = 0; i < labels.length; i += 200) await knex('message_labels').insert(labels.slice(i, i + 200));
  }
}

/** Kept here rather than imported: a migration must not change when the store's code does. */
function labelRows(messageId: number, workspaceId: number, tags: { name: string; value: string }[], metadata: Record<string, string>) {
  const seen = new Set<string>();
  const out: { message_id: number; workspace_id: number; kind: string; name: string; value: string }[] = [];
  const add = (kind: string, name: string, value: string) => {
    const key = JSON.stringify([kind, name, value]);
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ message_id: messageId, workspace_id: workspaceId, kind, name, value });
  };
  for (const t of tags) {
    add('tag', t.name, t.value);
    add('tag_name', t.name, '');
  }
  for (const [name, value] of Object.entries(metadata)) add('metadata', name, value);
  return out;
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'pg') {
    await knex.raw('drop index if exists messages_subject_trgm');
  } else {
    await knex.raw('drop trigger if exists messages_subject_insert');
    await knex.raw('drop trigger if exists messages_subject_delete');
    await knex.raw('drop table if exists message_subjects');
  }
  await knex.raw('drop index if exists messages_workspace_created');
  await knex.raw('drop index if exists messages_workspace_from');
  await knex.schema.dropTableIfExists('message_labels');
}
