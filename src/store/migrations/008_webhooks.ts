import type { Knex } from 'knex';

/**
 * The webhook dispatcher's state: one `webhook_attempts` row per POST tried (the delivery log
 * the API shows); when a paused endpoint's next probe is due; and a lease on the endpoint, so
 * exactly one dispatcher at a time sends to it, in order. Attempts go with their delivery row,
 * so retention prunes the log with the event.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.bigInteger('next_probe_at').nullable();
    t.string('lease_owner', 64).nullable();
    t.bigInteger('lease_until').nullable();
  });
  await knex.schema.createTable('webhook_attempts', (t) => {
    t.increments('id');
    t.integer('delivery_id').notNullable().references('webhook_deliveries.id').onDelete('CASCADE');
    t.integer('endpoint_id').notNullable();
    t.string('event', 32).notNullable();
    t.integer('email_id').notNullable();
    t.integer('attempt').notNullable();
    t.integer('response_code').nullable();
    t.text('response_body').nullable();
    t.text('error').nullable();
    t.integer('duration_ms').notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['endpoint_id', 'id']);
    t.index(['delivery_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('webhook_attempts');
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.dropColumn('next_probe_at');
    t.dropColumn('lease_owner');
    t.dropColumn('lease_until');
  });
}
