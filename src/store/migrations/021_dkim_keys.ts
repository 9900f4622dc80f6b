import type { Knex } from 'knex';

/**
 * DKIM keys as a list per domain (SPEC §13): RSA and Ed25519, signing side by side, rotated
 * through a new selector. Every existing domain gets its one key as the first entry of its list,
 * `active` when the domain is verified (it signed until now and keeps signing, no re-verification)
 * and `pending` otherwise. Keys are stored as the domain's key was: PEM text in the database,
 * which is as protected as the rest of it. The domain's own selector and key columns stay: they
 * mirror the domain's primary key (its newest signing RSA key), for what reads one key only.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('dkim_keys', (t) => {
    t.increments('id');
    t.integer('domain_id').notNullable().references('domains.id').onDelete('CASCADE');
    t.string('selector', 63).notNullable();
    t.string('algorithm', 16).notNullable();
    t.text('private_key').notNullable();
    t.text('public_key').notNullable();
    t.string('status', 16).notNullable();
    /** A rotation's new key: the key it retires once it is verified, and for how long that one stays published. */
    t.integer('replaces_key_id').nullable();
    t.bigInteger('overlap_ms').nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('verified_at').nullable();
    t.bigInteger('retire_after').nullable();
    t.bigInteger('retired_at').nullable();
    t.unique(['domain_id', 'selector']);
  });
  await knex.raw(
    `insert into dkim_keys (domain_id, selector, algorithm, private_key, public_key, status, created_at, verified_at)
     select id, selector, 'rsa-sha256', dkim_private_key, dkim_public_key,
            case when status = 'verified' then 'active' else 'pending' end, created_at,
            case when status = 'verified' then coalesce(verified_at, created_at) else null end
     from domains order by id`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('dkim_keys');
}
