import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('workspaces', (t) => {
    t.increments('id');
    t.string('name', 200).notNullable().unique();
    t.string('plan', 40).notNullable().defaultTo('free');
    t.integer('rate_per_minute').notNullable();
    t.integer('rate_per_hour').notNullable();
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('api_keys', (t) => {
    t.increments('id');
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('name', 200).notNullable();
    t.string('prefix', 16).notNullable();
    t.string('key_hash', 64).notNullable().unique();
    t.string('domain', 253).nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('revoked_at').nullable();
  });
  await knex.schema.createTable('domains', (t) => {
    t.increments('id');
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('name', 253).notNullable().unique();
    t.string('status', 16).notNullable();
    t.string('verified_by', 16).nullable();
    t.string('selector', 63).notNullable();
    t.text('dkim_private_key').notNullable();
    t.text('dkim_public_key').notNullable();
    t.boolean('open_tracking').notNullable().defaultTo(false);
    t.boolean('click_tracking').notNullable().defaultTo(false);
    t.boolean('return_path_verified').notNullable().defaultTo(false);
    t.text('verification').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('verified_at').nullable();
  });
  await knex.schema.createTable('server_secrets', (t) => {
    t.string('id', 32).primary();
    t.string('purpose', 32).notNullable();
    t.text('secret').notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['purpose', 'created_at']);
  });
  await knex.schema.createTable('rate_limit_buckets', (t) => {
    t.integer('key_id').notNullable();
    t.bigInteger('second').notNullable();
    t.integer('count').notNullable();
    t.primary(['key_id', 'second']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['rate_limit_buckets', 'server_secrets', 'domains', 'api_keys', 'workspaces']) {
    await knex.schema.dropTableIfExists(table);
  }
}
