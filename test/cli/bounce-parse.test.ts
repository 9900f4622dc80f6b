import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const corpus = (name: string) => fileURLToPath(new URL(`../fixtures/bounces/messages/${name}`, import.meta.url));
const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('mailsvc bounce parse', () => {
  it('prints one JSON line per file in the SPEC §5 shape, for a DSN, an ARF report and an auto-reply', async () => {
    const files = [corpus('rfc3464-01.eml'), corpus('arf-01.eml'), corpus('rfc3834-02.eml')];
    const r = await runCli(['bounce', 'parse', ...files]);
    expect(r.code).toBe(0);
    expect(r.stdout.endsWith('\n')).toBe(true);
    const [dsn, arf, auto] = lines(r.stdout);
    expect(Object.keys(dsn)).toEqual(['file', 'kind', 'recipients', 'feedback_type', 'original_message_id']);
    expect(dsn).toMatchObject({
      file: files[0],
      kind: 'bounce',
      feedback_type: null,
      original_message_id: '<E1C50F1B-1C83-4820-BC36-AC6FBFBE8568@example.org>',
    });
    expect(dsn.recipients).toEqual([
      {
        address: 'userunknown@bouncehammer.jp',
        status: '5.1.1',
        smtp_code: 550,
        bounce_type: 'transient',
        reason: 'mailbox_full',
        diagnostic: expect.stringContaining('User Unknown'),
      },
    ]);
    expect(arf).toMatchObject({
      kind: 'complaint',
      feedback_type: 'abuse',
      recipients: [expect.objectContaining({ address: 'redacted@example.net', reason: 'complaint' })],
    });
    expect(auto).toEqual({ file: files[2], kind: 'autoreply', recipients: [], feedback_type: null, original_message_id: null });
  });

  it('accepts --json and prints the same lines', async () => {
    const plain = await runCli(['bounce', 'parse', corpus('arf-12.eml')]);
    const json = await runCli(['bounce', 'parse', '--json', corpus('arf-12.eml')]);
    expect(json.code).toBe(0);
    expect(json.stdout).toBe(plain.stdout);
    expect(lines(json.stdout)).toHaveLength(1);
  });

  it('exits non-zero naming a missing file on stderr, still printing the files it could read', async () => {
    const r = await runCli(['bounce', 'parse', corpus('rfc3464-04.eml'), 'no-such-report.eml']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/no-such-report\.eml: no such file/);
    expect(lines(r.stdout).map((l) => l.kind)).toEqual(['bounce']);
  });
});
