import type { Knex } from 'knex';

/**
 * What the inbound listener keeps of a report is bounded: an unproven report keeps its first
 * 256 KB, and the raw bytes stored per sending IP and day are capped. `stored_bytes` is what the
 * cap sums (by `remote_ip` and `received_at`); `raw_bound` says which bound cut the raw bytes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('inbound_reports', (t) => {
    t.bigInteger('stored_bytes').notNullable().defaultTo(0);
    /** max_size, unproven, ip_daily_cap; null when every byte received is kept. */
    t.string('raw_bound', 16).nullable();
    t.index(['remote_ip', 'received_at'], 'inbound_reports_remote_ip_received_at_index');
  });
  const length = knex.client.config.client === 'pg' ? 'octet_length(raw)' : 'length(raw)';
  await knex('inbound_reports').update({ stored_bytes: knex.raw(length) });
  await knex('inbound_reports').where({ truncated: true }).update({ raw_bound: 'max_size' });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('inbound_reports', (t) => {
    t.dropIndex(['remote_ip', 'received_at'], 'inbound_reports_remote_ip_received_at_index');
    t.dropColumn('raw_bound');
    t.dropColumn('stored_bytes');
  });
}
