import type { Knex } from 'knex';

/**
 * Sending addresses (SPEC §12): the address each recipient's last attempt went out from, and
 * each warming address's messages per destination group and UTC day, counted by every process.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('recipients', (t) => {
    t.string('source_address', 64).nullable();
  });
  await knex.schema.createTable('warmup_counts', (t) => {
    t.string('address', 64).notNullable();
    t.string('group_name', 255).notNullable();
    t.string('day', 10).notNullable();
    t.integer('count').notNullable();
    t.primary(['address', 'group_name', 'day']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('warmup_counts');
  // A plain DROP COLUMN: knex would copy and re-create the table on SQLite, and the foreign keys
  // of the rows pointing at recipients would cascade.
  await knex.raw('alter table recipients drop column source_address');
}
