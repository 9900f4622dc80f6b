import { describe, expect, it } from 'vitest';
import { messagesRepo } from '../../src/store/messages.ts';
import { suppressionsRepo } from '../../src/store/suppressions.ts';
import { workspaces } from '../../src/store/workspaces.ts';
import { migratedStore } from '../helpers/db.ts';
import { STORES } from '../helpers/stores.ts';

const AT = 1_700_000_000_000;

describe.each(STORES)('message ids drawn with the suppressions of a batch (%s)', (kind) => {
  it('on PostgreSQL draws fresh ids and reads which addresses are suppressed on the stream in one call; on SQLite leaves both to the caller', async () => {
    const { db } = await migratedStore(kind);
    const ws = await workspaces.insert(db, { name: 'w', plan: 'free', rate_per_minute: 10, rate_per_hour: 100, created_at: AT });
    const suppress = (address: string, stream: 'transactional' | 'broadcast') =>
      suppressionsRepo.add(db, { workspace_id: ws.id, stream, address, reason: 'manual', email_id: null, domain: null, created_at: AT });
    await suppress('gone@example.org', 'transactional');
    await suppress('elsewhere@example.org', 'broadcast');
    const addresses = ['Gone@Example.org', 'elsewhere@example.org', 'here@example.org'];

    const drawn = await messagesRepo.drawIdsWithSuppressed(db, 3, ws.id, 'transactional', addresses);
    if (kind === 'sqlite') {
      expect(drawn).toBeNull();
      return;
    }
    expect(drawn!.suppressed).toStrictEqual(new Set(['gone@example.org']));
    expect(drawn!.ids).toHaveLength(3);
    expect(drawn!.ids).toStrictEqual([...drawn!.ids].sort((a, b) => a - b));
    const again = await messagesRepo.drawIdsWithSuppressed(db, 2, ws.id, 'transactional', []);
    expect(again!.suppressed.size).toBe(0);
    expect(Math.min(...again!.ids)).toBeGreaterThan(Math.max(...drawn!.ids));
    // More addresses than one query takes: the caller reads them in chunks.
    const many = Array.from({ length: 501 }, (_, i) => `r${i}@example.org`);
    expect(await messagesRepo.drawIdsWithSuppressed(db, 1, ws.id, 'transactional', many)).toBeNull();
  });
});
