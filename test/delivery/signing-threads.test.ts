import { simpleParser } from 'mailparser';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { CopyJob } from '../../src/delivery/copy-builder.ts';
import { inlineSigner, SigningPool } from '../../src/delivery/sign-pool.ts';
import { createLogger } from '../../src/log/logger.ts';
import { domainsRepo } from '../../src/store/domains.ts';
import { messagesRepo } from '../../src/store/messages.ts';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { mailauthVerdict } from './dkim-check.ts';
import { deliveryEnv, FROM_DOMAIN } from './env.ts';

const T0 = Date.parse('2026-11-23T10:00:00.000Z');

describe.each(STORES)('DKIM signing in worker threads (%s)', (kind) => {
  it('signs in the threads what the event loop signs, every copy verified against the published key', async () => {
    const env = await deliveryEnv(kind);
    const { db, config } = env.server.services;
    const ids = [
      await env.send({ to: 'one@dest.test', text: 'Plain text only.\n'.repeat(300) }),
      await env.send({
        to: 'two@dest.test',
        html: '<p>Hi</p>',
        text: 'Hi',
        attachments: [{ filename: 'a.txt', content: Buffer.from('attached').toString('base64'), content_type: 'text/plain' }],
      }),
      await env.send({ to: 'three@dest.test', html: '<p>Grüße aus Köln</p>', subject: 'Grüße' }),
      // Plain fields, a text and an HTML part: the frame is written without nodemailer.
      await env.send({ to: 'four@dest.test', html: '<p>Your order has shipped.</p>', text: 'Your order has shipped.' }),
    ];
    const domain = (await domainsRepo.byName(db, FROM_DOMAIN))!;
    const keys = [{ domain: domain.name, selector: domain.selector, algorithm: 'rsa-sha256' as const, privateKeyPem: domain.dkim_private_key }];
    const jobs: CopyJob[] = [];
    for (const id of ids) {
      const row = (await messagesRepo.byId(db, id))!;
      jobs.push({ row, senderId: config.server.hostname, own: {}, keys, now: T0 });
      // A copy of its own for one recipient: other HTML and a header field of its own.
      jobs.push({
        row,
        senderId: config.server.hostname,
        own: { html: `<p>Only for you, ${id}</p>`, headers: { 'List-Unsubscribe': `<https://t.example/u/${id}>` } },
        keys,
        now: T0,
      });
    }

    const pool = new SigningPool(2, createLogger('silent'));
    onTestFinished(() => pool.close());
    // All asked for in one tick: they go to the threads in batches.
    const threaded = await Promise.all(jobs.map((job) => pool.build(job)));
    // The same content as a copy built on the event loop (MIME boundaries are random, so the
    // bytes differ), signed with the same key.
    const shown = async (raw: Buffer) => {
      const m = await simpleParser(raw);
      const attachments = m.attachments.map((a) => [a.filename, a.content.toString()]);
      return { subject: m.subject, text: m.text, html: m.html, attachments, unsubscribe: m.headers.get('list-unsubscribe') ?? null };
    };
    const inline = inlineSigner();
    for (const [i, job] of jobs.entries()) {
      const copy = threaded[i]!.raw;
      expect(await shown(copy)).toStrictEqual(await shown((await inline.build(job)).raw));
      expect(copy.toString('latin1')).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=acme\.test;/);
      expect(await mailauthVerdict(copy, env.dns.address)).toStrictEqual(['pass']);
    }
    expect((await shown(threaded[3]!.raw)).html).toContain(`<p>Only for you, ${ids[1]}</p>`);
    expect(await shown(threaded[6]!.raw)).toMatchObject({ text: 'Your order has shipped.', html: '<p>Your order has shipped.</p>' });
    expect(threaded[6]!.raw.toString('latin1')).toMatch(/\r\nContent-Type: multipart\/alternative;\r\n boundary="--_NmP-[0-9a-f]{16}-Part_1"\r\n/);
    // Each message's MIME was built once in its thread, its second copy came from the cache.
    expect(threaded.map((c) => c.built)).toStrictEqual([true, false, true, false, true, false, true, false]);
  });

  it('a light copy is not kept waiting behind a heavy copy its thread is encoding: it is built beside it, signed alike', async () => {
    const env = await deliveryEnv(kind);
    const { db, config } = env.server.services;
    const heavyId = await env.send({ to: 'one@dest.test', html: '<p>Big</p>' });
    const lightId = await env.send({ to: 'two@dest.test', text: 'One line.' });
    const domain = (await domainsRepo.byName(db, FROM_DOMAIN))!;
    const keys = [{ domain: domain.name, selector: domain.selector, algorithm: 'rsa-sha256' as const, privateKeyPem: domain.dkim_private_key }];
    // A recipient's own 6 MB of HTML: the thread needs a good part of a second to encode and hash it.
    const html = `<p>${'Tracked link text with some words in it. '.repeat(150_000)}</p>`;
    const heavy: CopyJob = { row: (await messagesRepo.byId(db, heavyId))!, senderId: config.server.hostname, own: { html }, keys, now: T0, weight: html.length };
    const light: CopyJob = { row: (await messagesRepo.byId(db, lightId))!, senderId: config.server.hostname, own: {}, keys, now: T0 };
    // One thread, so both would go to it in order.
    const pool = new SigningPool(1, createLogger('silent'));
    onTestFinished(() => pool.close());
    pool.start();
    const order: string[] = [];
    const heavyCopy = pool.build(heavy).then((c) => (order.push('heavy'), c));
    const lightCopy = pool.build(light).then((c) => (order.push('light'), c));
    const [bigCopy, smallCopy] = await Promise.all([heavyCopy, lightCopy]);
    expect(order).toEqual(['light', 'heavy']);
    expect(await mailauthVerdict(smallCopy.raw, env.dns.address)).toStrictEqual(['pass']);
    expect(await mailauthVerdict(bigCopy.raw, env.dns.address)).toStrictEqual(['pass']);
  });

  it('loses no message when its signing thread ends mid-copy: the recipient is deferred, then delivered signed', async () => {
    const clock = new ManualClock(T0);
    const env = await deliveryEnv(kind, { clock, random: () => 0.5 });
    env.mx('dest.test');
    const pool = new SigningPool(1, createLogger('silent'));
    onTestFinished(() => pool.close());
    let renders = 0;
    const worker = env.worker({
      signer: pool,
      // The first copy is handed to the thread in the microtasks that follow; the thread is ended
      // before its answer can be read.
      render: () => {
        if (renders++ === 0) setImmediate(() => pool.recycle());
        return {};
      },
    });
    const id = await env.send({ to: 'one@dest.test', html: '<p>Hello</p>' });

    expect(await worker.runOnce()).toMatchObject({ claimed: 1, deferred: 1, delivered: 0 });
    expect(env.sink.messages).toHaveLength(0);
    const recipient = (await env.detail(id)).recipients[0];
    expect(recipient).toMatchObject({ status: 'deferred', attempts: 1 });
    expect(recipient.last_response).toMatch(/the copy was not signed/);

    const due = (await env.server.services.db('recipients').where({ message_id: id }).first()).due_at;
    clock.set(Number(due));
    expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    expect(env.sink.messages).toHaveLength(1);
    expect(await mailauthVerdict(env.sink.messages[0]!.raw, env.dns.address)).toStrictEqual(['pass']);
    expect((await env.detail(id)).status).toBe('delivered');
  });
});
