import type { Knex } from 'knex';

/**
 * Indexes for the retention job (message bodies and events go after `retention.days`):
 * without them every pass would scan both tables whole.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('messages', (t) => {
    t.index(['created_at'], 'messages_created_at_index');
  });
  await knex.schema.alterTable('events', (t) => {
    t.index(['occurred_at'], 'events_occurred_at_index');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.dropIndex(['occurred_at'], 'events_occurred_at_index');
  });
  await knex.schema.alterTable('messages', (t) => {
    t.dropIndex(['created_at'], 'messages_created_at_index');
  });
}
