// `mailsvc bounce explain` over the whole corpus: every failed recipient of every file is shown
// with the signals found and the rule that decided, and agrees with `bounce parse`.

import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const dir = fileURLToPath(new URL('../fixtures/bounces/messages/', import.meta.url));
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.eml'))
  .sort()
  .map((f) => dir + f);
const jsonLines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('mailsvc bounce explain', () => {
  it('shows the deciding rule for each recipient of every corpus file, agreeing with bounce parse', async () => {
    const [explained, parsed] = await Promise.all([runCli(['bounce', 'explain', '--json', ...files]), runCli(['bounce', 'parse', ...files])]);
    expect(explained.code).toBe(0);
    const ex = jsonLines(explained.stdout);
    const pa = jsonLines(parsed.stdout);
    expect(ex).toHaveLength(files.length);
    let recipients = 0;
    ex.forEach((e, i) => {
      expect(e.file).toBe(pa[i].file);
      expect(e.kind).toBe(pa[i].kind);
      expect(e.recipients.map((r: any) => [r.address, r.bounce_type, r.reason, r.status])).toEqual(
        pa[i].recipients.map((r: any) => [r.address, r.bounce_type, r.reason, r.status]),
      );
      for (const r of e.recipients) {
        recipients++;
        expect(r.decided_by.length, `${e.file} ${r.address}`).toBeGreaterThan(0);
        expect(r.decided_by[0], `${e.file} ${r.address}`).toMatch(/^(?:status |text rule #\d+ |reply code |nothing specific|feedback report)/);
        if (r.decided_by[0].startsWith('text rule')) expect(r.words.length).toBeGreaterThan(0);
      }
    });
    expect(recipients).toBeGreaterThan(390);
  });

  it('prints a readable block per file naming the words and the rule', async () => {
    const r = await runCli(['bounce', 'explain', `${dir}lhost-sendmail-48.eml`, `${dir}arf-01.eml`]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('pseudo-local-part-kijitora-nyaan@sfr.fr: blocked (content_filtered)');
    expect(r.stdout).toContain('signals: status 5.7.1 from the report, reply code 550');
    expect(r.stdout).toContain('words:   mailbox does not exist: "User unknown"');
    expect(r.stdout).toMatch(/decided: text rule #\d+ mailbox does not exist: "User unknown"\n\s+then "does not exist" under 5\.7\.1/);
    expect(r.stdout).toContain('redacted@example.net: blocked (complaint)');
    expect(r.stdout).toContain('decided: feedback report (Feedback-Type: abuse)');
  });

  it('is also `bounce parse --explain`, and fails on an unreadable file', async () => {
    const [same, explain, missing] = await Promise.all([
      runCli(['bounce', 'parse', '--explain', `${dir}lhost-sendmail-48.eml`]),
      runCli(['bounce', 'explain', `${dir}lhost-sendmail-48.eml`]),
      runCli(['bounce', 'explain', `${dir}no-such-file.eml`]),
    ]);
    expect(same.stdout).toBe(explain.stdout);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('no such file');
  });
});
