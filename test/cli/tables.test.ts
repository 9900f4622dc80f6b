import { describe, expect, it } from 'vitest';
import { oneJson, runCli } from '../helpers/cli.ts';
import { startTestServer } from '../helpers/server.ts';

const WIDTH = 100;
const tooWide = (out: string) => out.split('\n').filter((l) => [...l].length > WIDTH);

describe('CLI tables', () => {
  it('fit 100 columns, eliding the DKIM key, and print it in full with --wide; --json is unchanged', async () => {
    const server = await startTestServer('sqlite');
    const cfg = ['--config', server.configFile];
    oneJson(await runCli([...cfg, 'workspace', 'create', 'narrow', '--json']));

    const added = await runCli([...cfg, 'domain', 'add', 'tables.test', '--workspace', 'narrow']);
    expect(added.code, added.stderr).toBe(0);
    expect(tooWide(added.stdout)).toEqual([]);
    expect(added.stdout).toMatch(/NAME\s+PRIORITY\s+VALUE/);
    expect(added.stdout).toContain('…');

    const json = oneJson(await runCli([...cfg, 'domain', 'show', 'tables.test', '--json']));
    const dkim = json.records.find((r: { name: string }) => r.name.includes('_domainkey')).value as string;
    expect(dkim.length).toBeGreaterThan(300);
    // The elided table shows the key's start, not all of it, and the record's name in full.
    const dkimName = json.records.find((r: { name: string }) => r.name.includes('_domainkey')).name as string;
    expect(added.stdout).toContain(dkimName);
    expect(added.stdout).toContain(dkim.slice(0, 10));
    expect(added.stdout).not.toContain(dkim);

    // --json is the same document with or without --wide.
    expect(oneJson(await runCli([...cfg, 'domain', 'show', 'tables.test', '--json', '--wide']))).toEqual(json);

    const shown = await runCli([...cfg, 'domain', 'show', 'tables.test', '--wide']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(dkim);
    expect(tooWide(shown.stdout).length).toBeGreaterThan(0);

    // Verify looks the records up (none are published here), so it prints the table and its problems and exits 1.
    const verified = await runCli([...cfg, 'domain', 'verify', 'tables.test']);
    expect(verified.code).toBe(1);
    expect(verified.stdout).toContain('Problems at the last check:');
    expect(tooWide(verified.stdout)).toEqual([]);
    const verifiedWide = await runCli([...cfg, 'domain', 'verify', 'tables.test', '--wide']);
    expect(verifiedWide.stdout).toContain(dkim);

    const forced = await runCli([...cfg, 'domain', 'verify', 'tables.test', '--skip-dns']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(tooWide(forced.stdout)).toEqual([]);
  });
});

describe('the table printer', () => {
  it('wraps prose columns at spaces and elides the columns named first', async () => {
    const { formatTable } = await import('../../src/cli/output.ts');
    const detail = 'could not look up the MX of the probe domain or its address (ENOTFOUND); name another with --probe-domain and try again';
    const lines = formatTable([{ check: 'outbound SMTP', detail, key: 'k'.repeat(300) }], ['check', 'detail', 'key'], { wrap: ['detail'], elideFirst: ['key'] }, false);
    expect(lines.every((l) => l.length <= 100)).toBe(true);
    expect(lines.length).toBeGreaterThan(2);
    // Every word of the prose is there, in order; the key is cut short with an ellipsis.
    const detailStart = lines[0].indexOf('DETAIL');
    const keyStart = lines[0].indexOf('KEY');
    expect(
      lines
        .slice(1)
        .map((l) => l.slice(detailStart, keyStart).trim())
        .join(' '),
    ).toBe(detail);
    expect(lines[1]).toMatch(/k+…$/);
    expect(formatTable([{ key: 'k'.repeat(300) }], ['key'], {}, true)[1]).toBe('k'.repeat(300));
  });
});
