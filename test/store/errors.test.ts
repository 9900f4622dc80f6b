import { describe, expect, it } from 'vitest';
import { DuplicateKeyError } from '../../src/store/errors.ts';
import { idempotencyRepo } from '../../src/store/idempotency.ts';
import { migratedStore } from '../helpers/db.ts';
import { STORES } from '../helpers/stores.ts';

describe.each(STORES)('storage errors (%s)', (kind) => {
  it('a second live record of one Idempotency-Key is a DuplicateKeyError, whatever the driver said', async () => {
    const { db } = await migratedStore(kind);
    const row = { api_key_id: 1, idem_key: 'k', request_hash: 'h', response_status: 201, response_body: '{"id":1}', created_at: 1000 };
    await idempotencyRepo.store(db, row, 0);
    const second = await idempotencyRepo.store(db, { ...row, response_body: '{"id":2}' }, 0).then(
      () => null,
      (e: unknown) => e,
    );
    expect(second).toBeInstanceOf(DuplicateKeyError);
    expect((second as DuplicateKeyError).table).toBe('idempotency_keys');
    expect((await idempotencyRepo.find(db, 1, 'k', 0))?.response_body).toBe('{"id":1}');
    // Outside its window the record is replaced, not refused.
    await idempotencyRepo.store(db, { ...row, response_body: '{"id":3}', created_at: 5000 }, 2000);
    expect((await idempotencyRepo.find(db, 1, 'k', 0))?.response_body).toBe('{"id":3}');
  });
});
