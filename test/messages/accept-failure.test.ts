import { describe, expect, it } from 'vitest';
import { validateSend } from '../../src/messages/validate.ts';
import { startTestServer } from '../helpers/server.ts';
import { STORES } from '../helpers/stores.ts';

/** The outcome of `promise` once it settles, or 'pending' if it has not after `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<PromiseSettledResult<T> | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms)));
  const settled = promise.then(
    (value): PromiseSettledResult<T> => ({ status: 'fulfilled', value }),
    (reason: unknown): PromiseSettledResult<T> => ({ status: 'rejected', reason }),
  );
  try {
    return await Promise.race([settled, pending]);
  } finally {
    clearTimeout(timer);
  }
}

describe.each(STORES)('accepting when the database cannot commit (%s)', (kind) => {
  it('answers every waiting message with an error instead of hanging, batch after batch', async () => {
    const server = await startTestServer(kind);
    const ws = await server.sender('acme', 'acme.test');
    const { accept, tenancy, clock, db } = server.services;
    const principal = await tenancy.authenticate(ws.apiKey);
    const send = (i: number) => accept.accept(principal, validateSend({ from: 'hello@acme.test', to: `u${i}@example.org`, subject: `S${i}`, text: 'Hi' }, clock.now()));
    // The sending domain is now known, so nothing but the commit needs the database.
    expect((await send(0)).status).toBe(201);

    // The pool is gone: the group committer cannot open a transaction and rejects its jobs
    // without running them, which used to leave the accepting batch taken by nobody.
    await db.destroy();
    for (const round of [1, 2]) {
      const answers = await Promise.all([send(round * 10), send(round * 10 + 1)].map((p) => within(p, 5_000)));
      expect(answers.map((a) => (a === 'pending' ? a : a.status))).toEqual(['rejected', 'rejected']);
    }
  });
});
