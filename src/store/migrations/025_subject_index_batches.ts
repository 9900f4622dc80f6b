import type { Knex } from 'knex';

/**
 * SQLite: the subject search index (`message_subjects`, migration 019) is written in batches
 * (`store/subject-index.ts`) rather than by a trigger on each insert. FTS5 writes a segment for
 * every statement that adds to it, so each commit of new messages wrote and later merged one.
 *
 * `message_subjects_upto` holds the largest message id indexed; every message has been indexed
 * so far, so it starts at the largest id. The delete trigger removes a message from the index
 * only when it was indexed: an FTS5 'delete' of a row the index never held corrupts it. A later
 * migration that rebuilds `messages` must create that trigger again (SQLite drops a table's
 * triggers with it). PostgreSQL's trigram index is kept by PostgreSQL: nothing changes there.
 */
export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'pg') return;
  await knex.raw('create table message_subjects_upto (id integer not null)');
  await knex.raw('insert into message_subjects_upto (id) select coalesce(max(id), 0) from messages');
  await knex.raw('drop trigger messages_subject_insert');
  await knex.raw('drop trigger messages_subject_delete');
  await knex.raw(
    'create trigger messages_subject_delete after delete on messages when old.id <= (select id from message_subjects_upto) ' +
      "begin insert into message_subjects (message_subjects, rowid, subject) values ('delete', old.id, old.subject); end",
  );
}

export async function down(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'pg') return;
  // The messages not indexed yet first: the trigger of each insert kept the index whole before.
  await knex.raw('insert into message_subjects (rowid, subject) select id, subject from messages where id > (select id from message_subjects_upto)');
  await knex.raw('drop trigger messages_subject_delete');
  await knex.raw('create trigger messages_subject_insert after insert on messages begin insert into message_subjects (rowid, subject) values (new.id, new.subject); end');
  await knex.raw(
    "create trigger messages_subject_delete after delete on messages begin insert into message_subjects (message_subjects, rowid, subject) values ('delete', old.id, old.subject); end",
  );
  await knex.raw('drop table message_subjects_upto');
}
