import type { Knex } from 'knex';

/**
 * The sandbox inbox: in `delivery.mode: sandbox` every message handed to the transport is kept
 * here, one row per recipient and attempt, with the exact bytes that would have gone out.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sandbox_messages', (t) => {
    t.increments('id');
    t.integer('workspace_id').notNullable();
    /** The sending domain, so a domain-scoped key sees only its own captures. */
    t.string('domain', 253).notNullable();
    t.integer('email_id').notNullable();
    t.integer('recipient_id').notNullable();
    /** The envelope: the VERP sender and the recipient, as they would be in MAIL FROM and RCPT TO. */
    t.string('mail_from', 320).notNullable();
    t.string('rcpt_to', 320).notNullable();
    t.string('message_id', 998).notNullable();
    t.text('subject').notNullable();
    /** What the sandbox answered: delivered, bounced, deferred, complained or unsubscribed. */
    t.string('outcome', 16).notNullable();
    /** The reply the sandbox gave in place of the receiving server. */
    t.text('response').notNullable();
    /** DKIM verified over the captured bytes against our own published key: pass, fail, neutral, none... */
    t.string('dkim_result', 16).notNullable();
    t.text('dkim_detail').notNullable();
    t.bigInteger('size').notNullable();
    t.binary('raw').notNullable();
    t.bigInteger('captured_at').notNullable();
    t.index(['workspace_id', 'id']);
    t.index(['captured_at']);
    t.index(['email_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('sandbox_messages');
}
