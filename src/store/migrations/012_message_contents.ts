import type { Knex } from 'knex';

/**
 * Message bodies move out of the `messages` row into a table of their own. A message's status
 * changes as its recipients are claimed and finished; SQLite writes an updated row whole, so
 * with the body inside, each status change rewrote several kilobytes of overflow pages (about
 * a tenth of the event loop's time when relaying). Bodies pruned by retention are deleted rows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('message_contents', (t) => {
    t.integer('message_id').primary().references('messages.id').onDelete('CASCADE');
    /** JSON of MessageContent (src/messages/content.ts): fields or raw MIME. */
    t.text('content').notNullable();
  });
  await knex.raw('insert into message_contents (message_id, content) select id, content from messages where content is not null');
  await knex.raw('alter table messages drop column content');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('messages', (t) => {
    t.text('content').nullable();
  });
  await knex.raw('update messages set content = (select c.content from message_contents c where c.message_id = messages.id)');
  await knex.schema.dropTable('message_contents');
}
