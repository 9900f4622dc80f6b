import type { Knex } from 'knex';

/**
 * Sender compliance (SPEC §13).
 *
 * - `events_reputation_index`: the complaint rate counts `email.delivered` and
 *   `email.complained` events of the last 7 days; the index makes that a range scan over two
 *   event names instead of a walk through every event since the retention cut.
 * - `broadcast_pauses`: one row per workspace and sending domain whose broadcast stream the
 *   complaint rate held (`paused_at`), and when an operator's release of that hold was first
 *   seen (`released_at`; null while held). The check inserts or re-arms the row in one
 *   conditional statement, so several processes hold a domain once.
 * - `domain_warnings`: one row per sending domain and warning code (a receiver refused mail
 *   because the sender's authentication failed), with the latest message and time.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.index(['event', 'occurred_at', 'workspace_id'], 'events_reputation_index');
  });
  await knex.schema.createTable('broadcast_pauses', (t) => {
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('sending_domain', 253).notNullable();
    t.bigInteger('paused_at').notNullable();
    t.bigInteger('released_at').nullable();
    t.text('reason').notNullable();
    t.primary(['workspace_id', 'sending_domain']);
  });
  await knex.schema.createTable('domain_warnings', (t) => {
    t.integer('domain_id').notNullable().references('domains.id').onDelete('CASCADE');
    t.string('code', 64).notNullable();
    t.text('message').notNullable();
    t.bigInteger('at').notNullable();
    t.primary(['domain_id', 'code']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('domain_warnings');
  await knex.schema.dropTable('broadcast_pauses');
  await knex.schema.alterTable('events', (t) => {
    t.dropIndex(['event', 'occurred_at', 'workspace_id'], 'events_reputation_index');
  });
}
