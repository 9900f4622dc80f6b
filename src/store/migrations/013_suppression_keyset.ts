import type { Knex } from 'knex';

/**
 * Keyset pages of one workspace's suppression list by id: both streams (the list endpoint), one
 * stream at a time (export, the list with `stream=`), and the same for a domain-scoped key.
 * Without them every page was read through the unique index (ordered by address) and sorted
 * whole: each page of an export of 420,000 entries sorted them all, on SQLite on the event loop.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('suppressions', (t) => {
    t.index(['workspace_id', 'id'], 'suppressions_keyset');
    t.index(['workspace_id', 'stream', 'id'], 'suppressions_stream_keyset');
    t.index(['workspace_id', 'domain', 'stream', 'id'], 'suppressions_domain_keyset');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('suppressions', (t) => {
    t.dropIndex([], 'suppressions_keyset');
    t.dropIndex([], 'suppressions_stream_keyset');
    t.dropIndex([], 'suppressions_domain_keyset');
  });
}
