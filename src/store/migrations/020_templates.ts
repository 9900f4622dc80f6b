import type { Knex } from 'knex';

/**
 * Stored templates (SPEC §15): a subject and an HTML and/or text part with `{{variable}}`
 * placeholders, named uniquely within a workspace (a send names one by id or by name).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('templates', (t) => {
    t.increments('id');
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('name', 100).notNullable();
    t.text('subject').notNullable();
    t.text('html').nullable();
    t.text('text').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['workspace_id', 'name']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('templates');
}
