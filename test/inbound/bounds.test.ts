import { describe, expect, it } from 'vitest';
import { UNPROVEN_KEEP_BYTES, rawToKeep } from '../../src/inbound/raw-bounds.ts';
import { pathological } from '../bounces/pathological.ts';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { RETURN_PATH, startInbound, type InboundHarness } from './harness.ts';
import { dsn } from './reports.ts';
import { RawSmtp } from './smtp-client.ts';

const POSTMASTER = `postmaster@${RETURN_PATH}`;
const crlf = (b: Buffer) => Buffer.from(b.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1');

/** One message over SMTP, its body written as it is (CRLF lines, none starting with a dot). */
async function send(h: InboundHarness, rcpt: string, body: Buffer) {
  const c = await RawSmtp.connect(h.port);
  try {
    await c.command('EHLO mx.example.org');
    await c.command('MAIL FROM:<>');
    expect((await c.command(`RCPT TO:<${rcpt}>`)).code).toBe(250);
    return await c.dataStream([body]);
  } finally {
    await c.quit();
  }
}

async function metric(h: InboundHarness, name: string): Promise<string> {
  return h.server.services.metrics.registry.getSingleMetricAsString(name);
}

describe('rawToKeep', () => {
  const base = { size: 1000, captured: 1000, proven: false, storedToday: 0, dailyCap: 10_000 };
  it('keeps all of a small report, 256 KB of a big unproven one, up to maxSize of a proven one, nothing past the cap', () => {
    expect(rawToKeep(base)).toEqual({ bytes: 1000, bound: null });
    expect(rawToKeep({ ...base, size: 5e6, captured: 5e6, dailyCap: 1e9 })).toEqual({ bytes: UNPROVEN_KEEP_BYTES, bound: 'unproven' });
    expect(rawToKeep({ ...base, size: 5e6, captured: 4e6, proven: true, dailyCap: 1e9 })).toEqual({ bytes: 4e6, bound: 'max_size' });
    expect(rawToKeep({ ...base, storedToday: 9000 })).toEqual({ bytes: 1000, bound: null });
    expect(rawToKeep({ ...base, storedToday: 9001 })).toEqual({ bytes: 0, bound: 'ip_daily_cap' });
    expect(rawToKeep({ ...base, size: 0, captured: 0, storedToday: 1e6 })).toEqual({ bytes: 0, bound: null });
  });
});

describe.each(STORES)('what an inbound report keeps (%s)', (kind) => {
  it('an unproven 10 MB report keeps its first 256 KB; a proven one keeps every byte', async () => {
    const h = await startInbound(kind);
    const big = crlf(pathological('dashes', 10 * 1024 * 1024));
    const r = await send(h, POSTMASTER, big);
    expect(r.code).toBe(250);
    expect(r.text).toMatch(new RegExp(`kept the first ${UNPROVEN_KEEP_BYTES} of ${big.length + 2} bytes`));

    const sent = await h.delivered();
    const verp = h.verp(sent.recipients[0]!.id);
    const proven = crlf(Buffer.concat([Buffer.from(dsn({ to: verp, recipient: 'user@example.org' })), pathological('dashes', 1024 * 1024)]));
    expect((await send(h, verp, proven)).text).toMatch(/^2\.0\.0 Ok: report \d+ stored$/);

    const [unproven, withProof] = await h.reports();
    expect(unproven).toMatchObject({ rcpt: POSTMASTER, proof: null, raw_bound: 'unproven' });
    expect([Number(unproven.size), Number(unproven.stored_bytes)]).toEqual([big.length + 2, UNPROVEN_KEEP_BYTES]);
    expect(Buffer.from(unproven.raw)).toEqual(big.subarray(0, UNPROVEN_KEEP_BYTES));
    expect(Boolean(unproven.truncated)).toBe(true);
    expect(withProof).toMatchObject({ proof: 'verp', outcome: 'applied', raw_bound: null });
    expect(Buffer.from(withProof.raw).length).toBe(proven.length + 2);
    expect(await metric(h, 'mailsvc_inbound_reports_truncated_total')).toContain('mailsvc_inbound_reports_truncated_total{reason="unproven"} 1');
  });

  it('past the per-IP daily cap stores no raw bytes, still acts on a proven report, and starts again the next UTC day', async () => {
    const clock = new ManualClock('2026-11-21T23:58:00.000Z');
    const h = await startInbound(kind, { clock, config: { inbound: { dailyStoreBytesPerIp: 2 * UNPROVEN_KEEP_BYTES } } });
    const unproven = crlf(pathological('dashes', 300 * 1024));
    for (let i = 0; i < 3; i++) expect((await send(h, POSTMASTER, unproven)).code).toBe(250);

    const sent = await h.delivered();
    const verp = h.verp(sent.recipients[0]!.id);
    const r = await send(h, verp, crlf(Buffer.from(dsn({ to: verp, recipient: 'user@example.org' }))));
    expect(r.text).toMatch(/^2\.0\.0 Ok: report \d+ stored \(kept the first 0 of \d+ bytes\)$/);
    expect((await h.email(sent.id)).recipients[0].status).toBe('bounced');
    expect((await h.suppression('transactional', 'user@example.org')).status).toBe(200);

    clock.set('2026-11-22T00:00:00.000Z');
    expect((await send(h, POSTMASTER, unproven)).code).toBe(250);

    const rows = await h.reports();
    expect(rows.map((x) => [Number(x.stored_bytes), x.raw_bound, Buffer.from(x.raw).length])).toEqual([
      [UNPROVEN_KEEP_BYTES, 'unproven', UNPROVEN_KEEP_BYTES],
      [UNPROVEN_KEEP_BYTES, 'unproven', UNPROVEN_KEEP_BYTES],
      [0, 'ip_daily_cap', 0],
      [0, 'ip_daily_cap', 0],
      [UNPROVEN_KEEP_BYTES, 'unproven', UNPROVEN_KEEP_BYTES],
    ]);
    expect(rows[3]).toMatchObject({ proof: 'verp', outcome: 'applied' });
    expect(await metric(h, 'mailsvc_inbound_reports_not_stored_total')).toContain('mailsvc_inbound_reports_not_stored_total{reason="ip_daily_cap"} 2');
  });
});
