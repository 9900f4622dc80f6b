import { randomBytes } from 'node:crypto';
import type { Clock } from '../core/ports.ts';
import type { Db } from '../store/db.ts';
import { secretsRepo } from '../store/secrets.ts';
import type { TokenKeyring } from '../tokens/index.ts';

/**
 * The token-signing keys every process shares, from the database; the newest is current. The
 * first process on an empty database creates one. Two processes racing there both succeed and
 * simply leave two valid keys. `purpose` keeps keys apart: console sessions have their own.
 */
export async function loadTokenKeyring(db: Db, clock: Clock, purpose = 'token'): Promise<TokenKeyring> {
  let rows = await secretsRepo.byPurpose(db, purpose);
  if (rows.length === 0) {
    await secretsRepo.insert(db, { id: randomBytes(3).toString('hex'), purpose, secret: randomBytes(32).toString('base64'), created_at: clock.now() });
    rows = await secretsRepo.byPurpose(db, purpose);
  }
  return {
    current: rows[rows.length - 1].id,
    keys: Object.fromEntries(rows.map((r) => [r.id, Buffer.from(r.secret, 'base64')])),
  };
}
