import { describe, expect, it, onTestFinished } from 'vitest';
import { createDnsResolver } from '../../src/dns/resolver.ts';
import { startTestDns } from '../helpers/dns-server.ts';
import { oneJson, runCli } from '../helpers/cli.ts';
import { STORES } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';

describe.each(STORES)('domain key add, rotate and list on the command line (%s)', (kind) => {
  it('adds an Ed25519 key, activates it through DNS, rotates the RSA key and lists every key as a table and as JSON', { timeout: 90_000 }, async () => {
    const dns = await startTestDns();
    onTestFinished(() => dns.close());
    const server = await startTestServer(kind, { dns: createDnsResolver([dns.address], 2000), config: { dns: { servers: [dns.address], timeout: 2 } } });
    const cfg = ['--config', server.configFile];
    oneJson(await runCli([...cfg, 'workspace', 'create', 'acme', '--json']));
    const added = oneJson(await runCli([...cfg, 'domain', 'add', 'keys.example.test', '--workspace', 'acme', '--json']));
    const rsa = added.keys[0];
    dns.set(rsa.record.name, 'TXT', rsa.record.value);
    oneJson(await runCli([...cfg, 'domain', 'verify', 'keys.example.test', '--json']));

    const ed = oneJson(await runCli([...cfg, 'domain', 'key', 'add', 'keys.example.test', '--algorithm', 'ed25519', '--json']));
    expect(ed).toMatchObject({ algorithm: 'ed25519-sha256', status: 'pending', selector: expect.stringMatching(/^mailsvc\d{6}e$/) });
    const human = await runCli([...cfg, 'domain', 'key', 'list', 'keys.example.test']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^ID\s+SELECTOR\s+ALGORITHM\s+STATUS\s+VERIFIED\s+PUBLISHED_UNTIL$/m);
    expect(human.stdout).toMatch(new RegExp(`${rsa.selector}\\s+rsa-sha256\\s+active\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d$`, 'm'));
    expect(human.stdout).toMatch(new RegExp(`${ed.selector}\\s+ed25519-sha256\\s+pending`));

    // Verifying the domain finds the Ed25519 record and activates the key.
    dns.set(ed.record.name, 'TXT', ed.record.value);
    const verified = oneJson(await runCli([...cfg, 'domain', 'verify', 'keys.example.test', '--json']));
    expect(verified.keys.map((k: { status: string }) => k.status)).toStrictEqual(['active', 'active']);

    const rotated = oneJson(await runCli([...cfg, 'domain', 'key', 'rotate', 'keys.example.test', '--algorithm', 'rsa', '--overlap', '3', '--json']));
    expect(rotated).toHaveLength(1);
    expect(rotated[0]).toMatchObject({ algorithm: 'rsa-sha256', status: 'pending', replaces_key_id: rsa.id, selector: `${rsa.selector}-2` });
    const printed = await runCli([...cfg, 'domain', 'key', 'rotate', 'keys.example.test', '--algorithm', 'ed25519']);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toMatch(/Publish these DNS records, then run mailsvc domain verify keys\.example\.test:/);
    expect(printed.stdout).toMatch(/_domainkey\.keys\.example\.test/);

    dns.set(rotated[0].record.name, 'TXT', rotated[0].record.value);
    oneJson(await runCli([...cfg, 'domain', 'verify', 'keys.example.test', '--json']));
    const listed = oneJson(await runCli([...cfg, 'domain', 'key', 'list', 'keys.example.test', '--json']));
    expect(listed.map((k: { selector: string; status: string }) => [k.selector, k.status])).toStrictEqual([
      [rsa.selector, 'retiring'],
      [ed.selector, 'active'],
      [rotated[0].selector, 'active'],
      [expect.stringMatching(/^mailsvc\d{6}e-2$/), 'pending'],
    ]);
    const retiring = listed[0];
    expect(Date.parse(retiring.retire_after) - Date.parse(listed[2].verified_at)).toBe(3 * 86_400_000);

    const bad = await runCli([...cfg, 'domain', 'key', 'add', 'keys.example.test', '--algorithm', 'dsa']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--algorithm.*must be rsa or ed25519/);
    const unknown = await runCli([...cfg, 'domain', 'key', 'list', 'nope.example.test']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/domain "nope\.example\.test" not found/);
  });
});
