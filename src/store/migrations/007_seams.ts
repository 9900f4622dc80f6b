import type { Knex } from 'knex';

/**
 * The webhook outbox. An endpoint belongs to a workspace; recording an event creates, in the
 * same transaction, one `webhook_deliveries` row per endpoint subscribed to that event: the
 * dispatcher's queue and the state of that event for that endpoint. The attempts themselves
 * (the delivery log) are the dispatcher's to add.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.increments('id');
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('url').notNullable();
    /** JSON array of event names the endpoint is subscribed to; null means all of them. */
    t.text('events').nullable();
    /**
     * The signing secret (`whsec_...`) itself: HMAC needs it and the API shows it. Server
     * secrets live in the database, like DKIM private keys.
     */
    t.text('secret').notNullable();
    /** active, paused or disabled. */
    t.string('status', 16).notNullable();
    /** Consecutive failed attempts, reset by any success. */
    t.integer('failure_count').notNullable().defaultTo(0);
    t.bigInteger('last_success_at').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['workspace_id', 'id']);
  });
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.increments('id');
    t.integer('event_id').notNullable().references('events.id').onDelete('CASCADE');
    t.integer('endpoint_id').notNullable().references('webhook_endpoints.id').onDelete('CASCADE');
    t.integer('workspace_id').notNullable();
    t.integer('email_id').notNullable();
    t.string('event', 32).notNullable();
    /**
     * pending (to be sent, or sent again), delivered, failed (given up after the last retry) or
     * skipped (the endpoint was disabled). Only pending is unfinished.
     */
    t.string('status', 16).notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    /** When the next attempt is due while pending. */
    t.bigInteger('due_at').nullable();
    t.string('lease_owner', 64).nullable();
    t.bigInteger('lease_until').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['event_id', 'endpoint_id']);
    t.index(['status', 'due_at']);
    t.index(['endpoint_id', 'status', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('webhook_deliveries');
  await knex.schema.dropTableIfExists('webhook_endpoints');
}
