import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';
import { validateSend } from '../../src/messages/validate.ts';
import { messagesRepo } from '../../src/store/messages.ts';

// Messages that arrive together are written together (one multi-row insert per commit): each
// must still get its own id, recipients, status, Message-ID and usage.
describe.each(STORES)('accepting many messages at once (%s)', (kind) => {
  it('gives each of 60 concurrent sends its own id, recipients, status and Message-ID, and bills only what is sent', async () => {
    const server = await startTestServer(kind);
    const ws = await server.workspace('many');
    await server.services.tenancy.setLimits('many', { perMinute: 10_000, perHour: 10_000 });
    await server.verifiedDomain(ws.id, 'acme.test');
    await server.verifiedDomain(ws.id, 'shop.test');
    await server.api('POST', '/suppressions', { key: ws.apiKey, body: { address: 'blocked@example.org', stream: 'broadcast' } });
    const get = (path: string) => server.api('GET', path, { key: ws.apiKey });

    const bodies = Array.from({ length: 60 }, (_, i) => ({
      from: i % 2 ? `news@acme.test` : `orders@shop.test`,
      to: Array.from({ length: 1 + (i % 3) }, (_, j) => `u${i}-${j}@example.org`).concat(i % 5 === 0 ? ['Blocked@example.org'] : []),
      subject: `Message ${i}`,
      text: `Body ${i}`,
      stream: i % 5 === 0 || i % 7 === 0 ? 'broadcast' : 'transactional',
      ...(i % 11 === 0 ? { scheduled_at: new Date(Date.now() + 2 * 86_400_000).toISOString() } : {}),
    }));
    // Through the accept service, all in one tick, so they are certain to share commits (over
    // HTTP in one process, requests arrive one by one); then read back over HTTP.
    const { accept, tenancy, clock } = server.services;
    const principal = await tenancy.authenticate(ws.apiKey);
    const before = accept.commitStats();
    const answers = await Promise.all(bodies.map((body) => accept.accept(principal, validateSend(body, clock.now()))));
    expect(answers.map((a) => a.status)).toStrictEqual(bodies.map(() => 201));
    expect(accept.commitStats().commits - before.commits).toBeLessThan(10);
    const ids = answers.map((a) => a.body.id);
    expect(new Set(ids).size).toBe(60);

    let billed = { transactional: 0, broadcast: 0 };
    for (const [i, body] of bodies.entries()) {
      const m = (await get(`/emails/${ids[i]}`)).body;
      expect(m).toMatchObject({ id: ids[i], subject: body.subject, stream: body.stream });
      const blocked = body.stream === 'broadcast' && i % 5 === 0;
      const waiting = body.scheduled_at ? 'scheduled' : 'queued';
      expect(m.recipients.map((r: { address: string; status: string }) => [r.address, r.status])).toStrictEqual(
        body.to.map((a) => [a, blocked && a === 'Blocked@example.org' ? 'suppressed' : waiting]),
      );
      expect(m.status).toBe(waiting);
      billed = { ...billed, [body.stream]: billed[body.stream as 'broadcast'] + body.to.length - (blocked ? 1 : 0) };
      const row = (await messagesRepo.byId(server.services.db, ids[i]!))!;
      expect(JSON.parse(row.content!)).toMatchObject({ text: body.text });
      expect(row.message_id_header).toMatch(new RegExp(`^<${ids[i]}\\.[0-9a-f]{16}@${body.from.split('@')[1]}>$`));
    }
    expect((await get('/usage')).body.totals).toStrictEqual(billed);
  });

  it('writes a batch of one workspace and stream in two statements on PostgreSQL, with no BEGIN or COMMIT, suppressions applied', async () => {
    const server = await startTestServer(kind);
    const ws = await server.workspace('one-group');
    await server.services.tenancy.setLimits('one-group', { perMinute: 10_000, perHour: 10_000 });
    await server.verifiedDomain(ws.id, 'acme.test');
    await server.api('POST', '/suppressions', { key: ws.apiKey, body: { address: 'gone@example.org', stream: 'transactional' } });
    const { accept, tenancy, clock, db } = server.services;
    const principal = await tenancy.authenticate(ws.apiKey);
    // The first message fills the cache of verified domains, which is read per process not per batch.
    await accept.accept(principal, validateSend({ from: 'a@acme.test', to: ['first@example.org'], subject: 'first', text: 'x' }, clock.now()));
    const seen: string[] = [];
    db.on('query', (q: { sql: string }) => seen.push(q.sql.trim().split(/\s+/)[0]!.toLowerCase()));
    const bodies = Array.from({ length: 20 }, (_, i) => ({
      from: 'a@acme.test',
      to: [`u${i}@example.org`, ...(i % 4 === 0 ? ['Gone@example.org'] : [])],
      subject: `S ${i}`,
      text: 'x',
    }));
    const answers = await Promise.all(bodies.map((body) => accept.accept(principal, validateSend(body, clock.now()))));
    expect(answers.map((a) => a.status)).toStrictEqual(bodies.map(() => 201));
    if (kind === 'pg') expect(seen).toStrictEqual(['select', 'with']);
    const statuses = await db('recipients')
      .whereIn(
        'message_id',
        answers.map((a) => a.body.id),
      )
      .where({ address: 'Gone@example.org' })
      .pluck('status');
    expect(statuses).toStrictEqual(['suppressed', 'suppressed', 'suppressed', 'suppressed', 'suppressed']);
    expect((await server.api('GET', '/usage', { key: ws.apiKey })).body.totals).toStrictEqual({ transactional: 21, broadcast: 0 });
  });
});
