import { createHash, randomBytes } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';
import { STORES } from '../helpers/stores.ts';
import { mailauthVerdict } from './dkim-check.ts';
import { deliveryEnv, loopbackAlias } from './env.ts';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe.each(STORES)('the content shared by all recipients (%s)', (kind) => {
  it('builds the MIME of a 1 MB attachment to 50 recipients once, and every sink gets the same attachment bytes', async () => {
    // Fewer slots than recipients: the rows are claimed in three batches, and the build made for
    // the first batch serves the other two.
    const env = await deliveryEnv(kind, { delivery: { concurrency: 20 } });
    const sinks: SmtpSink[] = [env.sink];
    env.mx('d1.test');
    for (const n of [2, 3, 4]) {
      const sink = await startSmtpSink();
      onTestFinished(() => sink.close());
      await loopbackAlias(`127.0.0.${n}`, env.port, sink);
      env.mx(`d${n}.test`, [{ name: `mx.d${n}.test`, ip: `127.0.0.${n}` }]);
      sinks.push(sink);
    }
    const file = randomBytes(1024 * 1024);
    const to = Array.from({ length: 50 }, (_, i) => `user${i}@d${(i % 4) + 1}.test`);
    const id = await env.send({
      to,
      html: '<p>The report is attached.</p>',
      text: 'The report is attached.',
      attachments: [{ filename: 'report.bin', content: file.toString('base64'), content_type: 'application/octet-stream' }],
    });

    expect(await env.worker().runOnce()).toMatchObject({ claimed: 50, delivered: 50 });
    const metrics = await (await fetch(`${env.server.url}/metrics`)).text();
    expect(metrics).toMatch(/^mailsvc_delivery_message_builds_total 1$/m);

    const received = sinks.flatMap((s) => s.messages);
    expect(received.map((m) => m.to[0]).sort()).toStrictEqual([...to].sort());
    for (const sink of sinks) expect(sink.messages.length).toBeGreaterThan(0);
    // Every copy carries the same body bytes (only envelope and signature differ per recipient),
    // and that body holds the attachment as sent.
    const body = (raw: Buffer) => raw.subarray(raw.indexOf('\r\n\r\n') + 4);
    expect(new Set(received.map((m) => sha256(body(m.raw))))).toStrictEqual(new Set([sha256(body(received[0]!.raw))]));
    const parsed = await simpleParser(received[0]!.raw);
    expect(parsed.attachments.map((a) => [a.filename, sha256(a.content)])).toStrictEqual([['report.bin', sha256(file)]]);
    expect(parsed.text?.trim()).toBe('The report is attached.');
    expect(parsed.html).toContain('<p>The report is attached.</p>');
    // Each copy is signed on its own (its own envelope), over the shared body.
    expect(await mailauthVerdict(received[0]!.raw, env.dns.address)).toStrictEqual(['pass']);
    expect(new Set(received.map((m) => m.from)).size).toBe(50);
    expect((await env.detail(id)).status).toBe('delivered');
  }, 60_000);
});
