import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseReport } from '../../src/bounces/index.ts';
import { createLogger } from '../../src/log/logger.ts';
import { ParseQueueFull, startParsePool, type ParsePoolOptions } from '../../src/inbound/parse-pool.ts';
import { ReportBytes, captureMessage } from '../../src/inbound/receive.ts';
import { pathological } from '../bounces/pathological.ts';
import { STORES } from '../helpers/stores.ts';
import { startInbound } from './harness.ts';
import { dsn } from './reports.ts';
import { sendMail } from './smtp-client.ts';

const CORPUS = join(import.meta.dirname, '../fixtures/bounces/messages');

async function pool(options: Partial<ParsePoolOptions> = {}) {
  const p = await startParsePool({ workers: 1, budgetMs: 30_000, maxQueued: 10, ...options }, createLogger('silent'));
  onTestFinished(() => p.close());
  return p;
}

describe('captureMessage', () => {
  it('keeps the first maxSize bytes across shared segments, hashes them, and counts every byte', async () => {
    const bytes = randomBytes(1_000_000);
    const chunks = Array.from({ length: 100 }, (_, i) => bytes.subarray(i * 10_000, (i + 1) * 10_000));
    const captured = await captureMessage(Readable.from(chunks), 700_001);
    expect(captured.size).toBe(1_000_000);
    expect(captured.raw.length).toBe(700_001);
    expect(captured.raw.segments.map((s) => s.length)).toEqual([262_144, 262_144, 175_713]);
    expect(captured.raw.head(1_000_000)).toEqual(bytes.subarray(0, 700_001));
    expect(captured.raw.head(300_000)).toEqual(bytes.subarray(0, 300_000));
    expect(captured.sha256).toBe(createHash('sha256').update(bytes.subarray(0, 700_001)).digest('hex'));
  });
});

describe('report parser pool', () => {
  it('parses in a worker thread exactly what the parser gives in-process', async () => {
    const p = await pool();
    const files = readdirSync(CORPUS)
      .filter((f) => f.endsWith('.eml'))
      .sort()
      .slice(0, 40);
    for (const file of files) {
      const raw = readFileSync(join(CORPUS, file));
      expect((await p.parse(ReportBytes.of(raw))).parsed, file).toEqual(await parseReport(raw));
    }
  });

  it('gives up a report over its time budget, replaces the worker, and parses the next one', async () => {
    // 40 MB of recipients takes several times the 100 ms budget to parse, however quiet the
    // machine (20 MB once parsed within 250 ms); a small DSN a few milliseconds.
    const p = await pool({ budgetMs: 100 });
    const slow = await p.parse(ReportBytes.of(pathological('dsn-recipients', 40 * 1024 * 1024)));
    expect(slow).toEqual({ parsed: null, unparsed: 'time_budget' });
    const small = ReportBytes.of(Buffer.from(dsn({ to: 'b+x@bounces.mailsvc.test', recipient: 'user@example.org' })));
    expect((await p.parse(small)).parsed).toMatchObject({ kind: 'bounce', recipients: [{ address: 'user@example.org' }] });
  });

  it('bounds the reports waiting for a worker: past the queue, parse refuses at once', async () => {
    const p = await pool({ workers: 1, maxQueued: 1 });
    const big = ReportBytes.of(pathological('dsn-recipients', 2 * 1024 * 1024));
    const running = p.parse(big);
    const waiting = p.parse(big);
    await expect(p.parse(big)).rejects.toBeInstanceOf(ParseQueueFull);
    expect((await running).parsed?.kind).toBe('bounce');
    expect((await waiting).parsed?.kind).toBe('bounce');
  });
});

describe.each(STORES)('inbound report over its parse budget (%s)', (kind) => {
  it('is answered 250, stored unparsed with no effect, and counted', async () => {
    const h = await startInbound(kind, { config: { inbound: { parseBudgetMs: 1 } } });
    const sent = await h.delivered();
    const verp = h.verp(sent.recipients[0]!.id);
    // A genuine DSN for our recipient, padded with 1 MB of recipients so no machine parses it in 1 ms.
    const body = Buffer.concat([Buffer.from(dsn({ to: verp, recipient: 'user@example.org' })), pathological('dsn-recipients', 1024 * 1024)]);
    const r = await sendMail(h.port, '', [verp], body);
    expect(r.data!.code).toBe(250);

    const [row] = await h.reports();
    expect(row).toMatchObject({ rcpt: verp, kind: 'unknown', outcome: 'unparsed', proof: 'verp', email_id: sent.id });
    expect(row.effect).toContain('parse time budget');
    expect((await h.email(sent.id)).recipients[0].status).toBe('delivered');
    const metrics = h.server.services.metrics.registry;
    expect(await metrics.getSingleMetricAsString('mailsvc_inbound_reports_unparsed_total')).toContain('mailsvc_inbound_reports_unparsed_total{reason="time_budget"} 1');
    expect(await metrics.getSingleMetricAsString('mailsvc_inbound_reports_total')).toContain('mailsvc_inbound_reports_total{kind="unknown",outcome="unparsed"} 1');
  });
});
