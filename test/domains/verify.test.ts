import { describe, expect, it, onTestFinished } from 'vitest';
import { createDnsResolver } from '../../src/dns/resolver.ts';
import { startTestDns, type TestDns } from '../helpers/dns-server.ts';
import { oneJson, runCli } from '../helpers/cli.ts';
import { STORES } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';

interface RecordJson {
  type: 'TXT' | 'MX';
  name: string;
  value: string;
  priority?: number;
  purpose: string;
  required: boolean;
}

function publish(dns: TestDns, records: RecordJson[]): void {
  const txt = new Map<string, string[]>();
  for (const r of records) {
    if (r.type === 'MX') dns.set(r.name, 'MX', { exchange: r.value, priority: r.priority! });
    else txt.set(r.name, [...(txt.get(r.name) ?? []), r.value]);
  }
  for (const [name, values] of txt) dns.set(name, 'TXT', values);
}

async function setup(kind: 'sqlite' | 'pg') {
  const dns = await startTestDns();
  onTestFinished(() => dns.close());
  const server = await startTestServer(kind, {
    dns: createDnsResolver([dns.address], 2000),
    config: { dns: { servers: [dns.address], timeout: 2 } },
  });
  const cfg = ['--config', server.configFile];
  oneJson(await runCli([...cfg, 'workspace', 'create', 'acme', '--json']));
  return { dns, server, cfg };
}

describe.each(STORES)('domain records and verification (%s)', (kind) => {
  it('prints the SPEC records, verifies them through DNS, and reports a wrong DKIM key', async () => {
    const { dns, server, cfg } = await setup(kind);
    const added = oneJson(await runCli([...cfg, 'domain', 'add', 'example.test', '--workspace', 'acme', '--json']));
    expect(added).toMatchObject({ name: 'example.test', status: 'pending' });
    expect(added.selector).toMatch(/^[a-z0-9-]+$/);
    const records: RecordJson[] = added.records;
    const byPurpose = Object.fromEntries(records.map((r) => [r.purpose, r]));
    expect(byPurpose.dkim).toMatchObject({ type: 'TXT', name: `${added.selector}._domainkey.example.test`, required: true });
    expect(byPurpose.dkim.value).toMatch(/^v=DKIM1; k=rsa; p=MII[A-Za-z0-9+/=]{300,}$/);
    expect(byPurpose.return_path).toMatchObject({ type: 'MX', name: 'bounces.example.test', value: 'mail.mailsvc.test', priority: 10, required: false });
    expect(byPurpose.spf).toMatchObject({ type: 'TXT', name: 'bounces.example.test', value: 'v=spf1 a:mail.mailsvc.test -all', required: false });
    expect(byPurpose.dmarc).toMatchObject({ type: 'TXT', name: '_dmarc.example.test', required: false });
    expect(byPurpose.dmarc.value).toMatch(/^v=DMARC1;/);

    // A wrong key: the domain stays pending and the mismatch is named.
    publish(
      dns,
      records.map((r) => (r.purpose === 'dkim' ? { ...r, value: 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiWRONGKEY' } : r)),
    );
    const failed = await runCli([...cfg, 'domain', 'verify', 'example.test', '--json']);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^error: domain "example\.test" is not verified: dkim: TXT .* publishes a different key/m);
    const wrong = JSON.parse(failed.stdout);
    expect(wrong.status).toBe('pending');
    expect(wrong.records.find((r: { purpose: string }) => r.purpose === 'dkim').verified).toBe(false);
    expect(wrong.problems.join('\n')).toMatch(/dkim: TXT mailsvc\d+\._domainkey\.example\.test publishes a different key/);

    // The real records: verified, the return path with it.
    publish(dns, records);
    const ok = oneJson(await runCli([...cfg, 'domain', 'verify', 'example.test', '--json']));
    expect(ok.status).toBe('verified');
    expect(ok.records.every((r: { verified: boolean }) => r.verified)).toBe(true);
    expect(ok.return_path_domain).toBe('bounces.example.test');
    expect(dns.queries.some((q) => q.name === `${added.selector}._domainkey.example.test` && q.type === 'TXT')).toBe(true);

    // The running server sees the CLI's change.
    const key = oneJson(await runCli([...cfg, 'key', 'create', '--workspace', 'acme', '--json'])).api_key;
    const listed = await server.api('GET', '/domains', { key });
    expect(listed.body.data[0]).toMatchObject({ name: 'example.test', status: 'verified' });
  });

  it('verifies through POST /domains/{id}/verify, naming a missing record', async () => {
    const { dns, server } = await setup(kind);
    const { apiKey } = await server.workspace('api-ws');
    const created = await server.api('POST', '/domains', { key: apiKey, body: { name: 'Shop.Example.Test' } });
    expect(created.status).toBe(201);
    expect(created.body.name).toBe('shop.example.test');

    const missing = await server.api('POST', `/domains/${created.body.id}/verify`, { key: apiKey });
    expect(missing.status).toBe(200);
    expect(missing.body.status).toBe('pending');
    expect(missing.body.problems.join('\n')).toMatch(/dkim: TXT \S+\._domainkey\.shop\.example\.test not found/);

    const dkim = created.body.records.find((r: RecordJson) => r.purpose === 'dkim');
    publish(dns, [dkim]);
    const verified = await server.api('POST', `/domains/${created.body.id}/verify`, { key: apiKey });
    expect(verified.body.status).toBe('verified');
    // Optional records may be missing; they are reported but do not block verification.
    expect(verified.body.return_path_domain).toBeNull();
    expect(verified.body.problems.some((p: string) => p.startsWith('return_path:'))).toBe(true);
  });

  it('`domain inbound D on` makes the MX of D to this server a required record, verified through DNS', async () => {
    const { dns, cfg } = await setup(kind);
    const added = oneJson(await runCli([...cfg, 'domain', 'add', 'in.example.test', '--workspace', 'acme', '--json']));
    const early = await runCli([...cfg, 'domain', 'inbound', 'in.example.test', 'on']);
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/must be verified before it can receive mail/);
    publish(dns, added.records);
    oneJson(await runCli([...cfg, 'domain', 'verify', 'in.example.test', '--json']));

    const on = oneJson(await runCli([...cfg, 'domain', 'inbound', 'in.example.test', 'on', '--json']));
    expect(on.inbound).toBe(true);
    const mx = on.records.find((r: RecordJson) => r.purpose === 'inbound');
    expect(mx).toMatchObject({ type: 'MX', name: 'in.example.test', value: 'mail.mailsvc.test', priority: 10, required: true, verified: false });
    const text = await runCli([...cfg, 'domain', 'show', 'in.example.test']);
    expect(text.stdout).toMatch(/receiving: on/);
    expect(text.stdout).toMatch(/inbound\s+MX\s+in\.example\.test\s+10\s+mail\.\S+\s+yes\s+no/);

    // Required: without it the domain is no longer verified.
    const failed = await runCli([...cfg, 'domain', 'verify', 'in.example.test', '--json']);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/inbound: MX in\.example\.test (points to nothing|not found)/);
    publish(dns, on.records);
    const ok = oneJson(await runCli([...cfg, 'domain', 'verify', 'in.example.test', '--json']));
    expect([ok.status, ok.records.every((r: { verified: boolean }) => r.verified)]).toStrictEqual(['verified', true]);
    const off = oneJson(await runCli([...cfg, 'domain', 'inbound', 'in.example.test', 'off', '--json']));
    expect([off.inbound, off.records.some((r: RecordJson) => r.purpose === 'inbound')]).toStrictEqual([false, false]);
  });

  it('refuses a duplicate or malformed domain name clearly', async () => {
    const { server } = await setup(kind);
    const { apiKey } = await server.workspace('dup');
    expect((await server.api('POST', '/domains', { key: apiKey, body: { name: 'dup.test' } })).status).toBe(201);
    const again = await server.api('POST', '/domains', { key: apiKey, body: { name: 'DUP.test.' } });
    expect(again.status).toBe(409);
    expect(again.body).toStrictEqual({ error: 'Domain dup.test is not available' });
    const bad = await server.api('POST', '/domains', { key: apiKey, body: { name: 'not a domain' } });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatch(/`name`/);
  });
});
