import type { Knex } from 'knex';

/**
 * The daily usage counter of a workspace and stream becomes up to `USAGE_SLOTS` rows
 * (`src/store/usage.ts`) that readers add up. On PostgreSQL every accepting commit of every
 * process added to the same row and held its lock until it committed, so commits of several
 * processes queued on it; each commit now adds to a slot of its own choosing. SQLite has one
 * writer and keeps using slot 0 under its old key.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('usage_daily', (t) => {
    t.integer('slot').notNullable().defaultTo(0);
  });
  if (knex.client.config.client === 'pg') {
    await knex.raw('alter table usage_daily drop constraint usage_daily_pkey');
    await knex.raw('alter table usage_daily add primary key (workspace_id, day, stream, slot)');
  } else {
    await knex.schema.alterTable('usage_daily', (t) => t.unique(['workspace_id', 'day', 'stream', 'slot'], { indexName: 'usage_daily_slot_unique' }));
  }
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'pg') {
    await knex.raw(`
      create temporary table usage_summed on commit drop as
        select workspace_id, day, stream, sum(count)::integer as count from usage_daily group by workspace_id, day, stream`);
    await knex.raw('delete from usage_daily');
    await knex.raw('alter table usage_daily drop constraint usage_daily_pkey');
    await knex.raw('alter table usage_daily drop column slot');
    await knex.raw('alter table usage_daily add primary key (workspace_id, day, stream)');
    await knex.raw('insert into usage_daily (workspace_id, day, stream, count) select workspace_id, day, stream, count from usage_summed');
    return;
  }
  await knex.schema.alterTable('usage_daily', (t) => t.dropUnique(['workspace_id', 'day', 'stream', 'slot'], 'usage_daily_slot_unique'));
  await knex.schema.alterTable('usage_daily', (t) => t.dropColumn('slot'));
}
