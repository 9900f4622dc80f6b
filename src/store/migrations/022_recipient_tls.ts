import type { Knex } from 'knex';

/**
 * How each recipient's last delivery was protected (SPEC §13): `none`, `opportunistic` (TLS,
 * certificate unchecked) or `mta-sts` (TLS verified for an MX host its domain's policy names).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('recipients', (t) => {
    t.string('tls', 16).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  // A plain DROP COLUMN: knex would copy and re-create the table on SQLite, and the foreign keys
  // of the rows pointing at recipients would cascade.
  await knex.raw('alter table recipients drop column tls');
}
