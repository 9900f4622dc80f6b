import type { Knex } from 'knex';

/**
 * Receiving mail for applications (SPEC §14). A domain may receive (`domains.inbound`); a route
 * is a webhook endpoint with a match (`route_match`, `route_priority`), so it has the endpoint's
 * secret, states, lease and delivery log; a received message keeps its raw bytes in
 * `inbound_messages`, and each route's delivery of it is a `webhook_deliveries` row that carries
 * its own payload and no event (`event_id` null, `inbound_id` set).
 *
 * Not run in a transaction: on SQLite, making `event_id` nullable copies the table, and only
 * outside a transaction can the copy switch foreign keys off; inside one, dropping the old table
 * would cascade to every row of `webhook_attempts`.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('domains', (t) => {
    t.boolean('inbound').notNullable().defaultTo(false);
  });
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    /** Null for a webhook endpoint; the match of a route (`support@d`, `*@d`, `*+x@d`). */
    t.text('route_match').nullable();
    t.integer('route_priority').notNullable().defaultTo(0);
  });
  await knex.schema.createTable('inbound_messages', (t) => {
    t.increments('id');
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.bigInteger('received_at').notNullable();
    t.text('mail_from').notNullable();
    /** JSON array of the envelope recipients a route took. */
    t.text('recipients').notNullable();
    t.string('remote_ip', 64).notNullable();
    t.text('helo').nullable();
    t.integer('size').notNullable();
    t.string('sha256', 64).notNullable();
    /** JSON: the parsed message as the payload shows it, attachments without their bytes. */
    t.text('parsed').notNullable();
    t.binary('raw').notNullable();
    t.index(['workspace_id', 'id']);
    t.index(['received_at']);
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.integer('event_id').nullable().alter();
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    /** A route delivery's payload, exactly as sent; null: the event's. */
    t.text('payload').nullable();
    t.integer('inbound_id').nullable().references('inbound_messages.id').onDelete('CASCADE');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex('webhook_deliveries').whereNull('event_id').delete();
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropForeign(['inbound_id']);
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropColumn('inbound_id');
    t.dropColumn('payload');
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.integer('event_id').notNullable().alter();
  });
  await knex.schema.dropTable('inbound_messages');
  await knex('webhook_endpoints').whereNotNull('route_match').delete();
  await knex.raw('alter table webhook_endpoints drop column route_match');
  await knex.raw('alter table webhook_endpoints drop column route_priority');
  await knex.raw('alter table domains drop column inbound');
}
