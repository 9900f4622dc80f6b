import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { RETURN_PATH, startInbound } from './harness.ts';
import { dsn } from './reports.ts';
import { RawSmtp, sendMail } from './smtp-client.ts';

const POSTMASTER = `postmaster@${RETURN_PATH}`;

/** A DSN whose returned message carries a huge base64 attachment, as chunks (never held whole). */
function* hugeReport(head: string, totalBytes: number): Generator<Buffer> {
  yield Buffer.from(
    `${head.replace(/\r?\n/g, '\r\n')}\r\n--B\r\nContent-Type: message/rfc822\r\n\r\nSubject: big\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n`,
  );
  const line = `${'QUJD'.repeat(19)}\r\n`;
  const block = Buffer.from(line.repeat(Math.floor(262_144 / line.length)));
  for (let sent = 0; sent < totalBytes; sent += block.length) yield block;
}

describe.each(STORES)('inbound hostile input (%s)', (kind) => {
  it('answers malformed MIME, a truncated DSN and a binary blob cleanly, stores them, and stays healthy', async () => {
    const h = await startInbound(kind);
    const sent = await h.delivered();
    const verp = h.verp(sent.recipients[0]!.id);

    const malformed = [
      'Content-Type: multipart/report; report-type=delivery-status\nMIME-Version: 1.0\n\n--nowhere\nContent-Type: message/delivery-status\n\nFinal-Recipient',
      'Content-Type: multipart/mixed; boundary="a"\n\n--a\nContent-Type: multipart/mixed; boundary="a"\n\n--a\n--a\n--a--\n--a--',
      'From: \x00\x01\x02\nContent-Type: ;;;;;\nContent-Transfer-Encoding: base64\n\n!!!!====',
      '',
    ];
    for (const body of malformed) {
      const r = await sendMail(h.port, '', [POSTMASTER], body);
      expect(r.data!.code).toBe(250);
    }

    // A DSN cut off in its delivery-status part (a sender's size limit): what arrived still counts.
    const full = dsn({ to: verp, recipient: 'user@example.org' });
    const truncated = full.slice(0, full.indexOf('Remote-MTA'));
    const t = await sendMail(h.port, '', [verp], truncated);
    expect(t.data!.code).toBe(250);

    // Random bytes: NULs, bare CR and LF, 8-bit, lines that start with a dot.
    const blob = Buffer.concat([randomBytes(200_000), Buffer.from('\r\n.\r\n..\r\n.x\n\r')]);
    const b = await sendMail(h.port, '', [POSTMASTER], blob);
    expect(b.data!.code).toBe(250);

    const reports = await h.reports();
    expect(reports).toHaveLength(malformed.length + 2);
    expect(reports.every((r) => typeof r.kind === 'string' && r.outcome)).toBe(true);
    expect(reports[malformed.length]).toMatchObject({ rcpt: verp, kind: 'bounce', outcome: 'applied' });
    expect((await h.email(sent.id)).recipients[0].status).toBe('bounced');

    // Protocol abuse: garbage commands, an over-long line, a client that vanishes mid-DATA.
    const c = await RawSmtp.connect(h.port);
    expect(Math.floor((await c.command('\x00\x01garbage')).code / 100)).toBe(5);
    expect(Math.floor((await c.command(`EHLO ${'x'.repeat(5000)}`)).code / 100)).toBeGreaterThanOrEqual(4);
    c.destroy();
    const d = await RawSmtp.connect(h.port);
    await d.command('EHLO mx.example.org');
    await d.command('MAIL FROM:<>');
    await d.command(`RCPT TO:<${POSTMASTER}>`);
    await d.command('DATA');
    d.write('Subject: cut\r\n\r\nhalf a messa');
    d.destroy();
    await d.closed;

    const health = await fetch(`${h.server.url}/healthz`);
    expect(health.status).toBe(200);
    const after = await sendMail(h.port, '', [POSTMASTER], 'Subject: still here\n\nok\n');
    expect(after.data!.code).toBe(250);
    // The half-sent message was not acknowledged, so it was not stored.
    expect(await h.reports()).toHaveLength(malformed.length + 3);
  });

  it('accepts a 30 MB report with 250, keeps the first inbound.maxSize bytes and still acts on it', async () => {
    const h = await startInbound(kind, { config: { inbound: { host: '127.0.0.1', port: 0, returnPathDomain: RETURN_PATH, maxSize: 10_485_760 } } });
    const sent = await h.delivered();
    const verp = h.verp(sent.recipients[0]!.id);
    const head = dsn({ to: verp, recipient: 'user@example.org' })
      .replace(/boundary="[^"]+"/, 'boundary="B"')
      .split('--3F1A2C0001.1763719205/mx.example.org')
      .slice(0, 3)
      .join('--B');
    const c = await RawSmtp.connect(h.port);
    const ehlo = await c.command('EHLO mx.example.org');
    // No SIZE limit advertised: a sender that saw one would bounce its report locally.
    expect(ehlo.text).not.toMatch(/^SIZE/m);
    await c.command('MAIL FROM:<>');
    expect((await c.command(`RCPT TO:<${verp}>`)).code).toBe(250);
    const reply = await c.dataStream(hugeReport(head, 30 * 1024 * 1024));
    expect(reply.code).toBe(250);
    expect(reply.text).toMatch(/kept the first 10485760 of \d+ bytes/);
    await c.quit();

    const [stored] = await h.reports();
    expect(stored).toMatchObject({ kind: 'bounce', outcome: 'applied' });
    expect(Boolean(stored.truncated)).toBe(true);
    expect(Number(stored.size)).toBeGreaterThan(30 * 1024 * 1024);
    expect(Buffer.from(stored.raw).length).toBe(10_485_760);
    expect((await h.email(sent.id)).recipients[0].status).toBe('bounced');
    expect((await fetch(`${h.server.url}/healthz`)).status).toBe(200);
  });
});
