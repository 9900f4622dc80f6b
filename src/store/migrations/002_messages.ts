import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('messages', (t) => {
    t.increments('id');
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.integer('api_key_id').nullable();
    t.string('domain', 253).notNullable();
    t.string('stream', 16).notNullable();
    t.string('status', 16).notNullable();
    t.string('source', 8).notNullable();
    t.text('from_header').notNullable();
    t.string('from_address', 320).notNullable();
    t.text('subject').notNullable();
    /** JSON of MessageContent (src/messages/content.ts): fields or raw MIME; null once pruned. */
    t.text('content').nullable();
    t.text('envelope').notNullable();
    t.string('message_id_header', 255).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('scheduled_at').nullable();
    t.index(['workspace_id', 'id']);
    t.index(['workspace_id', 'status', 'id']);
  });
  await knex.schema.createTable('recipients', (t) => {
    t.increments('id');
    t.integer('message_id').notNullable().references('messages.id').onDelete('CASCADE');
    t.integer('workspace_id').notNullable();
    t.string('address', 320).notNullable();
    t.string('domain', 253).notNullable();
    t.string('kind', 4).notNullable();
    t.string('status', 16).notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('last_response').nullable();
    t.string('last_mx', 253).nullable();
    /** When the row is next due for a delivery attempt (scheduled, queued, deferred). */
    t.bigInteger('due_at').nullable();
    /** When the message first became due; the retry window (delivery.maxAge) counts from here. */
    t.bigInteger('first_due_at').nullable();
    t.string('lease_owner', 64).nullable();
    t.bigInteger('lease_until').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['message_id']);
    t.index(['status', 'due_at']);
    t.index(['workspace_id', 'address']);
  });
  await knex.schema.createTable('suppressions', (t) => {
    t.increments('id');
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('stream', 16).notNullable();
    /** Lowercased: suppression matches case-insensitively. */
    t.string('address', 320).notNullable();
    t.string('reason', 16).notNullable();
    t.integer('email_id').nullable();
    /** The sending domain of the message that caused it, for domain-scoped keys; null when manual. */
    t.string('domain', 253).nullable();
    t.bigInteger('created_at').notNullable();
    t.unique(['workspace_id', 'stream', 'address']);
  });
  await knex.schema.createTable('idempotency_keys', (t) => {
    t.integer('api_key_id').notNullable();
    t.string('idem_key', 256).notNullable();
    t.string('request_hash', 64).notNullable();
    t.integer('response_status').notNullable();
    t.text('response_body').notNullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['api_key_id', 'idem_key']);
    t.index(['created_at']);
  });
  await knex.schema.createTable('usage_daily', (t) => {
    t.integer('workspace_id').notNullable();
    t.string('day', 10).notNullable();
    t.string('stream', 16).notNullable();
    t.integer('count').notNullable();
    t.primary(['workspace_id', 'day', 'stream']);
  });
  await knex.schema.createTable('events', (t) => {
    t.increments('id');
    t.integer('workspace_id').notNullable();
    t.integer('email_id').notNullable().references('messages.id').onDelete('CASCADE');
    t.integer('recipient_id').nullable();
    t.string('event', 32).notNullable();
    t.bigInteger('occurred_at').notNullable();
    /** The webhook payload exactly as it will be sent. */
    t.text('payload').notNullable();
    t.unique(['email_id', 'event', 'occurred_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['events', 'usage_daily', 'idempotency_keys', 'suppressions', 'recipients', 'messages']) {
    await knex.schema.dropTableIfExists(table);
  }
}
