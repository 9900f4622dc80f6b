import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { describe, expect, it, onTestFinished } from 'vitest';
import { oneJson, runCli } from '../helpers/cli.ts';
import { startTestDns, type TestDns } from '../helpers/dns-server.ts';
import { scratchStore, STORES } from '../helpers/stores.ts';

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
    // The reference's Date header has whole seconds and the request takes time: the skew is
    // 3600 s give or take a few, never exactly 3600 on a loaded machine.
    expect(checks['clock']).toMatchObject({ status: 'problem', detail: expect.stringMatching(/^\d+ s ahead of /) });
    const skew = /^(\d+) s ahead of (.+)$/.exec((checks['clock'] as { detail?: string }).detail ?? '');
    expect(skew?.[2]).toBe(clockUrl);
    expect(Math.abs(Number(skew?.[1]) - 3600)).toBeLessThanOrEqual(5);

    // The same for people: a table, then what to fix.
    const human = await runCli([...cfg, 'doctor', '--probe-domain', 'probe.test', '--no-clock']);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/^STATUS +CHECK +DETAIL\n/);
    expect(human.stdout).toMatch(/^skipped +clock +no reference given/m);
    expect(human.stdout).toMatch(/\nTo fix:\n {2}- reverse DNS: set the PTR record/);
  });

  it('confirms each source address: its PTR names its ehlo, and that name resolves back to it', async () => {
    const sourceAddresses = [
      { address: '127.0.0.10', ehlo: 'mta1.doctor.test' },
      { address: '127.0.0.11', ehlo: 'mta2.doctor.test' },
      { address: '127.0.0.12', ehlo: 'mta3.doctor.test' },
      { address: '127.0.0.13', ehlo: 'mta4.doctor.test' },
      { address: '127.0.0.14', ehlo: 'mta5.doctor.test' },
      { address: '127.0.0.15', ehlo: 'localhost' },
      { address: '2001:db8::25', ehlo: 'mta6.doctor.test' },
      { address: '2001:db8::26', ehlo: 'mta7.doctor.test' },
    ];
    const { dns, cfg } = await setup({ delivery: { port: await listener(), sourceAddresses } });
    dns.set('1.0.0.127.in-addr.arpa', 'PTR', HOST);
    dns.set('10.0.0.127.in-addr.arpa', 'PTR', 'MTA1.doctor.test.');
    dns.set('mta1.doctor.test', 'A', ['127.0.0.9', '127.0.0.10']);
    dns.set('11.0.0.127.in-addr.arpa', 'PTR', 'host-11.provider.test');
    // 127.0.0.12 has no PTR record at all.
    dns.set('13.0.0.127.in-addr.arpa', 'PTR', 'mta4.doctor.test');
    dns.set('mta4.doctor.test', 'A', '127.0.0.99');
    dns.set('14.0.0.127.in-addr.arpa', 'PTR', 'mta5.doctor.test');
    dns.set('mta5.doctor.test', 'AAAA', '2001:db8::14'); // a name, but no A record
    const six = (last: string) => `${last}.0.0.${'0.'.repeat(20)}8.b.d.0.1.0.0.2.ip6.arpa`;
    dns.set(six('5.2'), 'PTR', 'mta6.doctor.test');
    dns.set('mta6.doctor.test', 'AAAA', '2001:0db8:0:0:0:0:0:0025');
    dns.set(six('6.2'), 'PTR', 'mta7.doctor.test');
    dns.set('mta7.doctor.test', 'A', '127.0.0.26');
    oneJson(await runCli([...cfg, 'migrate', '--json']));

    const res = await runCli([...cfg, 'doctor', '--probe-domain', 'probe.test', '--no-clock', '--json']);
    expect(res.code).toBe(1);
    const checks = byCheck(JSON.parse(res.stdout));
    expect(checks['source address 127.0.0.10']).toStrictEqual({
      check: 'source address 127.0.0.10',
      status: 'ok',
      detail: '127.0.0.10 points back to mta1.doctor.test, which resolves to it',
    });
    expect(checks['source address 127.0.0.11']).toStrictEqual({
      check: 'source address 127.0.0.11',
      status: 'problem',
      detail: '127.0.0.11 points back to host-11.provider.test, not its ehlo mta2.doctor.test',
      fix: 'set the PTR record of 127.0.0.11 to mta2.doctor.test, or its ehlo in delivery.sourceAddresses to host-11.provider.test (if that name resolves to 127.0.0.11)',
    });
    expect(checks['source address 127.0.0.12']).toMatchObject({
      status: 'problem',
      detail: '127.0.0.12 has no PTR record (ENOTFOUND)',
      fix: 'ask the owner of 127.0.0.12 (your hosting provider) to set its PTR record to mta3.doctor.test',
    });
    expect(checks['source address 127.0.0.13']).toMatchObject({
      status: 'problem',
      detail: 'mta4.doctor.test resolves to 127.0.0.99, not 127.0.0.13',
      fix: 'add 127.0.0.13 to the A records of mta4.doctor.test',
    });
    expect(checks['source address 127.0.0.14']).toMatchObject({
      status: 'problem',
      detail: 'mta5.doctor.test has no A record (ENODATA)',
      fix: 'publish an A record for mta5.doctor.test pointing at 127.0.0.14',
    });
    expect(checks['source address 127.0.0.15']).toMatchObject({ status: 'problem', detail: 'its ehlo "localhost" is not a fully qualified domain name' });
    expect(checks['source address 2001:db8::25']).toMatchObject({ status: 'ok', detail: '2001:db8::25 points back to mta6.doctor.test, which resolves to it' });
    expect(checks['source address 2001:db8::26']).toMatchObject({
      status: 'problem',
      detail: 'mta7.doctor.test has no AAAA record (ENODATA)',
      fix: 'publish an AAAA record for mta7.doctor.test pointing at 2001:db8::26',
    });
    // The server's own name is checked as before, beside them.
    expect(checks['reverse DNS']).toMatchObject({ status: 'ok' });
    expect(res.stderr).toMatch(/^error: 6 problem\(s\): source address 127\.0\.0\.11, source address 127\.0\.0\.12, .*, source address 2001:db8::26$/m);

    const human = await runCli([...cfg, 'doctor', '--probe-domain', 'probe.test', '--no-clock']);
    expect(human.stdout).toMatch(/\n {2}- source address 127\.0\.0\.12: ask the owner of 127\.0\.0\.12/);
  });

  it("checks each verified domain's DMARC record and the alignment of DKIM and SPF with it, and published MTA-STS policies, naming the records to publish", async () => {
    const { dns, cfg } = await setup({ delivery: { port: await listener() } });
    dns.set('1.0.0.127.in-addr.arpa', 'PTR', HOST);
    oneJson(await runCli([...cfg, 'workspace', 'create', 'acme', '--json']));
    type Rec = { type: string; name: string; value: string; priority?: number; purpose: string };
    const publish = (records: Rec[], purposes: string[]) => {
      for (const r of records.filter((x) => purposes.includes(x.purpose))) {
        if (r.type === 'TXT') dns.set(r.name, 'TXT', r.value);
        else dns.set(r.name, 'MX', { exchange: r.value, priority: r.priority! });
      }
    };
    const add = async (name: string, purposes: string[]): Promise<Rec[]> => {
      const records = oneJson(await runCli([...cfg, 'domain', 'add', name, '--json'])).records as Rec[];
      publish(records, purposes);
      const verified = await runCli([...cfg, 'domain', 'verify', name, '--json']);
      expect(verified.code, verified.stderr).toBe(0);
      return records;
    };
    // Everything published: aligned through DKIM and through the domain's own return path.
    await add('aligned.test', ['dkim', 'return_path', 'spf', 'dmarc']);
    // Only the DKIM key: no DMARC record, and the envelope sender is the server's return path.
    await add('bare.test', ['dkim']);
    // Strict SPF alignment: the return path can never align, DKIM carries DMARC.
    await add('strict.test', ['dkim']);
    dns.set('_dmarc.strict.test', 'TXT', 'v=DMARC1; p=reject; aspf=s');
    // Verified, then its DKIM key taken out of DNS: DKIM cannot pass, so it cannot align.
    const gone = await add('gone.test', ['dkim', 'dmarc']);
    const dkim = gone.find((r) => r.purpose === 'dkim')!;
    dns.clear(dkim.name);
    // An MTA-STS record for the hostname's domain whose policy host does not resolve.
    dns.set('_mta-sts.doctor.test', 'TXT', 'v=STSv1; id=20261126');

    const res = await runCli([...cfg, 'doctor', '--probe-domain', 'probe.test', '--no-clock', '--json']);
    expect(res.code).toBe(1);
    const checks = byCheck(JSON.parse(res.stdout));
    expect(checks['DMARC aligned.test']).toMatchObject({ status: 'ok', detail: '_dmarc.aligned.test: v=DMARC1; p=none' });
    expect(checks['DKIM alignment aligned.test']).toMatchObject({ status: 'ok' });
    expect(checks['SPF alignment aligned.test']).toMatchObject({
      status: 'ok',
      detail: 'the return path bounces.aligned.test aligns with the From domain aligned.test (relaxed)',
    });

    expect(checks['DMARC bare.test']).toMatchObject({ status: 'problem', fix: expect.stringContaining('publish TXT _dmarc.bare.test "v=DMARC1; p=none"') });
    expect(checks['DKIM alignment bare.test']).toMatchObject({ status: 'ok' });
    expect(checks['SPF alignment bare.test']).toMatchObject({
      status: 'problem',
      detail:
        'the envelope sender uses bounces.mail.doctor.test, which does not align with the From domain bare.test: SPF passes for bounces.mail.doctor.test but not for DMARC (DMARC still passes through DKIM)',
      fix: `publish MX bounces.bare.test 10 "${HOST}" and TXT bounces.bare.test "v=spf1 a:${HOST} -all", then run mailsvc domain verify bare.test`,
    });

    expect(checks['DMARC strict.test']).toMatchObject({ status: 'ok' });
    expect(checks['SPF alignment strict.test']).toMatchObject({ status: 'ok', detail: expect.stringContaining('DMARC passes through DKIM alone') });

    expect(checks['DKIM alignment gone.test']).toMatchObject({ status: 'problem', fix: `publish TXT ${dkim.name} "${dkim.value}"` });
    expect(checks['SPF alignment gone.test']).toMatchObject({ status: 'problem', detail: expect.not.stringContaining('DMARC still passes') });

    expect(checks['MTA-STS doctor.test']).toMatchObject({
      status: 'problem',
      detail: expect.stringMatching(/^_mta-sts\.doctor\.test is published but the policy host mta-sts\.doctor\.test does not resolve/),
      fix: expect.stringContaining('publish an A record for mta-sts.doctor.test'),
    });
    expect(checks['MTA-STS bounces.mail.doctor.test']).toMatchObject({ status: 'skipped' });
    dns.set('mta-sts.doctor.test', 'A', '127.0.0.1');
    const after = byCheck(JSON.parse((await runCli([...cfg, 'doctor', '--probe-domain', 'probe.test', '--no-clock', '--json'])).stdout));
    expect(after['MTA-STS doctor.test']).toMatchObject({ status: 'ok', detail: 'v=STSv1; id=20261126; the policy host mta-sts.doctor.test resolves' });
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

describe.each(STORES)('mailsvc doctor on the database (%s)', (kind) => {
  it('names a workspace or domain whose pool the configuration no longer has', async () => {
    const store = await scratchStore(kind);
    onTestFinished(() => store.drop());
    const sourceAddresses = [{ address: '127.0.0.10', ehlo: 'mta1.doctor.test' }];
    const { dns, cfg } = await setup({ ...store.config, delivery: { port: await listener(), sourceAddresses, pools: { bulk: ['127.0.0.10'], vip: ['127.0.0.10'] } } });
    dns.set('1.0.0.127.in-addr.arpa', 'PTR', HOST);
    dns.set('10.0.0.127.in-addr.arpa', 'PTR', 'mta1.doctor.test');
    dns.set('mta1.doctor.test', 'A', '127.0.0.10');
    oneJson(await runCli([...cfg, 'workspace', 'create', 'acme', '--json']));
    oneJson(await runCli([...cfg, 'workspace', 'pool', 'acme', 'vip', '--json']));
    oneJson(await runCli([...cfg, 'domain', 'add', 'shop.test', '--json']));
    oneJson(await runCli([...cfg, 'domain', 'pool', 'shop.test', 'bulk', '--json']));
    const doctor = ['doctor', '--probe-domain', 'probe.test', '--no-clock', '--json'];
    expect(byCheck(JSON.parse((await runCli([...cfg, ...doctor])).stdout))['pools']).toStrictEqual({
      check: 'pools',
      status: 'ok',
      detail: 'every pool named (by 2 workspace(s) and domain(s)) is in delivery.pools',
    });

    const file = cfg[1]!;
    const changed = JSON.parse(readFileSync(file, 'utf8'));
    changed.delivery.pools = { vip: ['127.0.0.10'] };
    writeFileSync(file, JSON.stringify(changed));
    const checks = byCheck(JSON.parse((await runCli([...cfg, ...doctor])).stdout));
    expect(checks['pools']).toBeUndefined();
    expect(checks['pool of domain shop.test']).toStrictEqual({
      check: 'pool of domain shop.test',
      status: 'problem',
      detail: `domain shop.test names pool "bulk", which delivery.pools does not have: its mail goes from the workspace's pool, else the stream's, else every source address`,
      fix: 'add pool bulk to delivery.pools, or name another: mailsvc domain pool shop.test NAME|none',
    });
  });

  it('names a trusted network whose API key is revoked; the revoke warns about it', async () => {
    const store = await scratchStore(kind);
    onTestFinished(() => store.drop());
    const { dns, cfg } = await setup({ ...store.config, delivery: { port: await listener() } });
    dns.set('1.0.0.127.in-addr.arpa', 'PTR', HOST);
    oneJson(await runCli([...cfg, 'workspace', 'create', 'acme', '--json']));
    const key = oneJson(await runCli([...cfg, 'key', 'create', '--workspace', 'acme', '--name', 'printers', '--json'])) as { id: number };
    const file = cfg[1]!;
    const config = JSON.parse(readFileSync(file, 'utf8'));
    config.submission = { trustedNetworks: [{ network: '10.1.2.0/24', keyId: key.id }] };
    writeFileSync(file, JSON.stringify(config));
    const doctor = ['doctor', '--probe-domain', 'probe.test', '--no-clock', '--json'];
    expect(byCheck(JSON.parse((await runCli([...cfg, ...doctor])).stdout))['trusted networks']).toStrictEqual({
      check: 'trusted networks',
      status: 'ok',
      detail: 'the key of each of the 1 trusted network(s) is live',
    });

    const revoked = await runCli([...cfg, 'key', 'revoke', String(key.id), '--json']);
    expect(revoked.stderr).toBe(`WARNING: key ${key.id} is the key of trusted network 10.1.2.0/24 (submission.trustedNetworks): its clients must now authenticate.\n`);
    expect(oneJson(revoked)).toMatchObject({ id: key.id });
    const checks = byCheck(JSON.parse((await runCli([...cfg, ...doctor])).stdout));
    expect(checks['trusted networks']).toBeUndefined();
    expect(checks['trusted network 10.1.2.0/24']).toStrictEqual({
      check: 'trusted network 10.1.2.0/24',
      status: 'problem',
      detail: `submission.trustedNetworks[0] names API key ${key.id}, which is revoked or unknown: clients in 10.1.2.0/24 get 530 unless they authenticate`,
      fix: 'create a key for them (mailsvc key create --workspace NAME) and put its id in submission.trustedNetworks[0].keyId',
    });
  });
});
