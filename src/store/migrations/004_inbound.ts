import type { Knex } from 'knex';

/**
 * Every message the inbound listener accepts is kept here, whether or not it had an effect, so
 * an operator can see what the world sent back and why it was (or was not) acted on.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('inbound_reports', (t) => {
    t.increments('id');
    t.bigInteger('received_at').notNullable();
    /** The RCPT this copy was accepted for (one row per accepted recipient). */
    t.string('rcpt', 320).notNullable();
    /** The envelope sender; '' for the null sender of a DSN. */
    t.string('mail_from', 320).notNullable();
    t.string('remote_ip', 64).notNullable();
    t.string('helo', 255).nullable();
    /** Bytes received; the stored raw message may be shorter (truncated). */
    t.bigInteger('size').notNullable();
    t.boolean('truncated').notNullable().defaultTo(false);
    /** SHA-256 of the stored bytes: a retransmitted report (lost 250) is recognised. */
    t.string('sha256', 64).notNullable();
    t.string('kind', 16).notNullable();
    t.string('feedback_type', 32).nullable();
    /** How the report was tied to our mail: verp, unsubscribe, message_id, or null. */
    t.string('proof', 16).nullable();
    t.integer('workspace_id').nullable();
    t.integer('email_id').nullable();
    t.integer('recipient_id').nullable();
    /** applied, duplicate, no_effect, uncorrelated. */
    t.string('outcome', 16).notNullable();
    /** Human-readable summary of what was done, or why nothing was. */
    t.text('effect').notNullable();
    t.binary('raw').notNullable();
    t.index(['received_at']);
    t.index(['sha256']);
    t.index(['email_id']);
  });
  // Correlation by our original Message-ID looks messages up by this header.
  await knex.schema.alterTable('messages', (t) => {
    t.index(['message_id_header'], 'messages_message_id_header_index');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('messages', (t) => {
    t.dropIndex(['message_id_header'], 'messages_message_id_header_index');
  });
  await knex.schema.dropTableIfExists('inbound_reports');
}
