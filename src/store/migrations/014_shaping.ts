import type { Knex } from 'knex';

/**
 * Traffic shaping (SPEC §11). `delivery_domains` is the MX rollup every process shares: a
 * recipient domain's destination group, until `expires_at` (the MX answer's life).
 * `delivery_groups` holds what a group's replies did to it (suspended until, why) and, on
 * PostgreSQL, the pacing of its per-minute limit: `next_slot` is the earliest time its next
 * message may start, taken under the row's lock by every process.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('delivery_domains', (t) => {
    t.string('domain', 255).primary();
    t.string('group_name', 255).notNullable();
    t.bigInteger('expires_at').notNullable();
    t.index(['group_name']);
  });
  await knex.schema.createTable('delivery_groups', (t) => {
    t.string('name', 255).primary();
    t.bigInteger('suspended_until').nullable();
    t.text('reason').nullable();
    t.bigInteger('throttled_until').nullable();
    // Milliseconds with a fraction: a slot interval is rarely a whole number of them.
    t.double('next_slot').notNullable().defaultTo(0);
    t.bigInteger('updated_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('delivery_groups');
  await knex.schema.dropTable('delivery_domains');
}
