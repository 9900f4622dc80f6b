import type { Knex } from 'knex';

/**
 * Sending pools (SPEC §12): a workspace and a domain may each name one of `delivery.pools`; null
 * names none. Only the name is stored: the addresses stay in the configuration, so a name that
 * the configuration no longer has falls back to the next level when mail is sent.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workspaces', (t) => t.string('pool', 255).nullable());
  await knex.schema.alterTable('domains', (t) => t.string('pool', 255).nullable());
}

/**
 * Plain DROP COLUMN (SQLite 3.35+), not knex's `dropColumn`, which on SQLite copies the table,
 * drops it and renames the copy: inside the migration's transaction the foreign keys stay on,
 * and dropping `workspaces` would cascade to every message, domain and key.
 */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table ?? drop column ??', ['domains', 'pool']);
  await knex.raw('alter table ?? drop column ??', ['workspaces', 'pool']);
}
