import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { describe, expect, it, onTestFinished } from 'vitest';
import { oneJson, runCli } from '../helpers/cli.ts';
import { startTestDns, type TestDns } from '../helpers/dns-server.ts';

const HOST = 'mail.doctor.test';

/** A TCP listener standing in for a remote MX: the check only needs the connection. */
async function listener(): Promise<number> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined); // the doctor hangs up at once
    socket.end('220 mx.probe.test ESMTP\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** An HTTP server whose Date header is `offsetMs` away from now. */
async function clockServer(offsetMs: number): Promise<string> {
  const server = createHttpServer((_req, res) => {
    res.setHeader('Date', new Date(Date.now() + offsetMs).toUTCString());
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

async function setup(extra: Record<string, unknown>): Promise<{ dns: TestDns; cfg: string[] }> {
  const dns = await startTestDns();
  onTestFinished(() => dns.close());
  const dir = mkdtempSync(join(tmpdir(), 'mailsvc-doctor-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ dataDir: join(dir, 'data'), server: { hostname: HOST }, dns: { servers: [dns.address], timeout: 2 }, ...extra }));
  dns.set(HOST, 'A', '127.0.0.1');
  dns.set('probe.test', 'MX', { exchange: 'mx.probe.test', priority: 10 });
  dns.set('mx.probe.test', 'A', '127.0.0.1');
  return { dns, cfg: ['--config', config] };
}

const byCheck = (doc: { checks: { check: string; fix?: string }[] }): Record<string, { check: string; fix?: string }> =>
  Object.fromEntries(doc.checks.map((c) => [c.check, c]));

describe('mailsvc doctor', () => {
  it('passes a healthy setup: hostname with A and PTR, port 25 reachable, domain records, database, clock', async () => {
    const { dns, cfg } = await setup({ delivery: { port: await listener() } });
    dns.set('1.0.0.127.in-addr.arpa', 'PTR', HOST);
    oneJson(await runCli([...cfg, 'workspace', 'create', 'acme', '--json']));
    const domain = oneJson(await runCli([...cfg, 'domain', 'add', 'shop.test', '--json']));
    for (const r of domain.records as { type: string; name: string; value: string; priority?: number }[]) {
      if (r.type === 'TXT') dns.set(r.name, 'TXT', r.value);
      else dns.set(r.name, 'MX', { exchange: r.value, priority: r.priority! });
    }

    const res = await runCli([...cfg, 'doctor', '--probe-domain', 'probe.test', '--clock-url', await clockServer(0), '--json']);
    expect(res.code, res.stderr).toBe(0);
    const doc = JSON.parse(res.stdout);
    expect(doc.ok).toBe(true);
    const checks = byCheck(doc);
    expect(checks['hostname']).toMatchObject({ status: 'ok', detail: `${HOST} resolves to 127.0.0.1` });
    expect(checks['reverse DNS']).toMatchObject({ status: 'ok', detail: `127.0.0.1 points back to ${HOST}` });
    expect(checks['outbound SMTP']).toMatchObject({ status: 'ok' });
    expect(checks['domain shop.test']).toMatchObject({ status: 'ok', detail: 'every record matches' });
    expect(checks['migrations']).toMatchObject({ status: 'ok' });
    expect(checks['clock']).toMatchObject({ status: 'ok' });
    // doctor looks, it does not change: the domain stays pending until `domain verify`.
    expect(oneJson(await runCli([...cfg, 'domain', 'show', 'shop.test', '--json'])).status).toBe('pending');
  });

  it('names each problem and its fix, and exits 1', async () => {
    const soon = new Date(Date.now() + 5 * 86_400_000);
    const pems = await generate([{ name: 'commonName', value: HOST }], { keySize: 2048, notAfterDate: soon });
    const { dns, cfg } = await setup({ delivery: { port: await closedPort() }, tls: { cert: pems.cert, key: pems.private } });
    dns.set('1.0.0.127.in-addr.arpa', 'PTR', 'host-127.provider.test');
    oneJson(await runCli([...cfg, 'workspace', 'create', 'acme', '--json']));
    oneJson(await runCli([...cfg, 'domain', 'add', 'shop.test', '--json'])); // no records published

    const clockUrl = await clockServer(-3_600_000);
    const res = await runCli([...cfg, 'doctor', '--probe-domain', 'probe.test', '--clock-url', clockUrl, '--json']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: 5 problem\(s\): reverse DNS, outbound SMTP, domain shop\.test, TLS certificate, clock$/m);
    const checks = byCheck(JSON.parse(res.stdout));
    expect(checks['reverse DNS']).toMatchObject({ status: 'problem', detail: `127.0.0.1 points back to host-127.provider.test, not ${HOST}` });
    expect(checks['reverse DNS'].fix).toContain(`set the PTR record of 127.0.0.1 to ${HOST}`);
    expect(checks['outbound SMTP']).toMatchObject({ status: 'problem', detail: expect.stringMatching(/^cannot connect to 127\.0\.0\.1:\d+: ECONNREFUSED$/) });
    expect(checks['outbound SMTP'].fix).toContain('delivery.relayHost');
    expect(checks['domain shop.test']).toMatchObject({ status: 'problem', detail: expect.stringMatching(/^dkim: TXT mailsvc\d+\._domainkey\.shop\.test/) });
    expect(checks['TLS certificate']).toMatchObject({ status: 'problem', detail: expect.stringMatching(/^expires in [45] day\(s\)/) });
    expect(checks['clock']).toMatchObject({ status: 'problem', detail: `3600 s ahead of ${clockUrl}` });

    // The same for people: a table, then what to fix.
    const human = await runCli([...cfg, 'doctor', '--probe-domain', 'probe.test', '--no-clock']);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/^STATUS +CHECK +DETAIL\n/);
    expect(human.stdout).toMatch(/^skipped +clock +no reference given/m);
    expect(human.stdout).toMatch(/\nTo fix:\n {2}- reverse DNS: set the PTR record/);
  });

  it('finds a hostname that is not fully qualified, and a database with migrations pending', async () => {
    const { cfg } = await setup({ server: { hostname: 'localhost' }, delivery: { port: await listener() } });
    const res = await runCli([...cfg, 'doctor', '--probe-domain', 'probe.test', '--no-clock', '--json']);
    expect(res.code).toBe(1);
    const checks = byCheck(JSON.parse(res.stdout));
    expect(checks['hostname']).toMatchObject({ status: 'problem', detail: 'server.hostname "localhost" is not a fully qualified domain name' });
    expect(checks['migrations']).toMatchObject({ status: 'problem', fix: 'run mailsvc migrate (serve also applies them at start)' });
    expect(checks['domains']).toMatchObject({ status: 'skipped' });
  });
});
