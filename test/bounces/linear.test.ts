import { describe, expect, it } from 'vitest';
import { parseReport } from '../../src/bounces/index.ts';
import { htmlToText } from '../../src/bounces/report.ts';
import { decodeQuotedPrintable, parseHeaders } from '../../src/bounces/mime.ts';
import { REPORT_LIMITS } from '../../src/bounces/limits.ts';
import { PATHOLOGICAL_KINDS, pathological } from './pathological.ts';

// Each family once took time quadratic in its length (80 KB of dashes: 8.6 s). At 1 MB a linear
// parser needs tens of milliseconds; a quadratic one needs minutes, so one second separates them
// with a wide margin even on a loaded machine.
describe('report parsing is linear and bounded', () => {
  it.each(PATHOLOGICAL_KINDS)('parses 1 MB of %s in under a second', async (kind) => {
    const raw = pathological(kind, 1024 * 1024);
    const t0 = performance.now();
    const report = await parseReport(raw);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(['bounce', 'unknown']).toContain(report.kind);
    expect(report.recipients.length).toBeLessThanOrEqual(REPORT_LIMITS.recipients);
  });

  it('keeps what the rewritten steps did before: QP soft breaks and trailing blanks, folded headers, HTML text', () => {
    expect(decodeQuotedPrintable('caf=C3=A9 \t\nsoft=\nbreak  \nend')).toBe('caf\xc3\xa9\nsoftbreak\nend');
    expect(decodeQuotedPrintable('a=  \nb')).toBe('ab');
    expect(parseHeaders('Subject: one\n two\n\t three\nX-Empty:\n  \n folded')).toEqual([
      { name: 'subject', value: 'one two three' },
      { name: 'x-empty', value: 'folded' },
    ]);
    expect(htmlToText('<p>User&nbsp;unknown:</p><b>550 5.1.1</b> <<<< <a href="x">here')).toMatch(/^ User unknown: {2}550 5\.1\.1 +<<<< +here *$/);
  });

  it('reads at most REPORT_LIMITS.recipients recipients of a DSN naming ten thousand', async () => {
    const report = await parseReport(pathological('dsn-recipients', 1_200_000));
    expect(report.kind).toBe('bounce');
    expect(report.recipients).toHaveLength(REPORT_LIMITS.recipients);
    expect(report.recipients[0]).toMatchObject({ address: 'user0@example.org', status: '5.1.1', bounceType: 'permanent' });
  });
});
