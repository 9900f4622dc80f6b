import type { Knex } from 'knex';

/**
 * Queue control (SPEC §11). A recipient an operator holds is `held`, with `held_at` the time it
 * was held: released, its `first_due_at` moves forward by the time it spent held, so holding
 * does not age mail towards `delivery.maxAge`.
 *
 * `queue_holds` are standing holds: a hold is the conjunction of its non-null fields
 * (`workspace_id` null: every workspace; `domain`: the recipient's domain; `group_name`: the
 * destination group of the recipient's domain, `delivery_domains`; `stream` and
 * `sending_domain`: the message's; `message_id`), and it holds matching mail accepted after it
 * too, until it is released. `filter_key` is the filter written out, so one filter is stored
 * once however many processes hold it at the same moment.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('recipients', (t) => {
    t.bigInteger('held_at').nullable();
  });
  await knex.schema.createTable('queue_holds', (t) => {
    t.increments('id');
    t.string('filter_key', 1200).notNullable().unique();
    t.integer('workspace_id').nullable().references('workspaces.id').onDelete('CASCADE');
    t.string('domain', 253).nullable();
    t.string('group_name', 255).nullable();
    t.string('stream', 16).nullable();
    t.string('sending_domain', 253).nullable();
    t.integer('message_id').nullable().references('messages.id').onDelete('CASCADE');
    t.text('reason').nullable();
    t.bigInteger('created_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('queue_holds');
  // Held rows go back to the queue: an older schema knows nothing of them.
  await knex('recipients').where({ status: 'held' }).where('attempts', '>', 0).update({ status: 'deferred' });
  await knex('recipients').where({ status: 'held' }).update({ status: 'queued' });
  await knex.raw(
    `update messages set status = case when exists (select 1 from recipients r where r.message_id = messages.id and r.status = 'deferred')
       then 'deferred' else 'queued' end where status = 'held'`,
  );
  await knex.schema.alterTable('recipients', (t) => {
    t.dropColumn('held_at');
  });
}
