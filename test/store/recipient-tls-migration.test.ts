import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { source } from '../../src/store/migrate.ts';
import { messageWith, migratedStore } from '../helpers/db.ts';
import { STORES } from '../helpers/stores.ts';

const TLS = '022_recipient_tls';

/** Migrations undone one by one, newest first, until 022 itself has been undone. */
async function downThroughTls(db: Knex): Promise<void> {
  for (;;) {
    const [completed] = (await db.migrate.list({ migrationSource: source })) as [({ name: string } | string)[], unknown[]];
    if (!completed.some((m) => (typeof m === 'string' ? m : m.name) === TLS)) return;
    await db.migrate.down({ migrationSource: source });
  }
}

describe.each(STORES)("recipients' tls column (%s)", (kind) => {
  it('is added empty for existing recipients, and going back drops it and keeps every recipient', async () => {
    const { db } = await migratedStore(kind);
    const { recipientIds } = await messageWith(db, ['delivered', 'queued']);
    expect(await db('recipients').orderBy('id').pluck('tls')).toStrictEqual([null, null]);
    await db('recipients').where({ id: recipientIds[0] }).update({ tls: 'mta-sts' });
    expect(await db('recipients').where({ id: recipientIds[0] }).first('tls')).toStrictEqual({ tls: 'mta-sts' });

    await downThroughTls(db);
    expect(Object.keys(await db('recipients').columnInfo())).not.toContain('tls');
    expect(await db('recipients').orderBy('id').pluck('id')).toStrictEqual(recipientIds);
    await db.migrate.latest({ migrationSource: source });
    expect(Object.keys(await db('recipients').columnInfo())).toContain('tls');
  });
});
