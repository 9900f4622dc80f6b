import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, PROJECT_ROOT } from '../../src/config/load.ts';
import { runCli } from '../helpers/cli.ts';

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('has the SPEC defaults and derives hostname-based values', () => {
    const c = loadConfig({ env: {}, overrides: { server: { hostname: 'Mail.Example.COM' } } });
    expect(c.http).toStrictEqual({ host: '0.0.0.0', port: 3000, bodyLimit: 10485760, trustProxy: [] });
    expect(c.submission).toMatchObject({ port: 1587, tlsPort: 1465, maxSize: 26214400, allowInsecureAuth: false, loopbackInsecureAuth: true });
    expect(c.inbound).toMatchObject({ port: 2525, returnPathDomain: 'bounces.mail.example.com' });
    expect(c.delivery).toMatchObject({ port: 25, tls: 'opportunistic', relayHost: null, maxConnectionsPerHost: 10, maxAge: 259200, leaseSeconds: 30 });
    expect(c.delivery.retrySchedule).toStrictEqual([60, 300, 900, 1800, 3600, 7200, 14400, 28800]);
    expect(c.webhooks).toMatchObject({ timeout: 10, pauseAfter: 10, probeInterval: 300, disableAfter: 259200, allowPrivateAddresses: false });
    expect(c.tracking.baseUrl).toBe('http://mail.example.com:3000');
    expect(c.retention.days).toBe(30);
    expect(c.database).toMatchObject({ client: 'sqlite', pool: 10 });
    expect(Object.isFrozen(c.http)).toBe(true);
    expect([c.submission.host, c.inbound.host]).toStrictEqual(['0.0.0.0', '0.0.0.0']);
  });

  it('listens on loopback in the sandbox unless a host is given', () => {
    const sandbox = loadConfig({ env: { MAILSVC_DELIVERY_MODE: 'sandbox' } });
    expect([sandbox.http.host, sandbox.submission.host, sandbox.inbound.host]).toStrictEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1']);
    const told = loadConfig({ env: { MAILSVC_DELIVERY_MODE: 'sandbox', MAILSVC_HTTP_HOST: '0.0.0.0' } });
    expect([told.http.host, told.submission.host]).toStrictEqual(['0.0.0.0', '127.0.0.1']);
  });

  it('layers a file, then MAILSVC_* variables, then flags', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailsvc-cfg-'));
    const file = join(dir, 'c.json');
    writeFileSync(file, JSON.stringify({ http: { port: 4000, host: '127.0.0.1' }, dns: { servers: ['127.0.0.1:5353'] } }));
    const c = loadConfig({ file, env: { MAILSVC_HTTP_PORT: '4001', MAILSVC_HTTP_BODY_LIMIT: '2048', MAILSVC_DELIVERY_RELAY_HOST: 'smtp.relay.test:587' } });
    expect(c.http).toStrictEqual({ host: '127.0.0.1', port: 4001, bodyLimit: 2048, trustProxy: [] });
    expect(c.dns.servers).toStrictEqual(['127.0.0.1:5353']);
    expect(c.delivery.relayHost).toBe('smtp.relay.test:587');
    expect(loadConfig({ file, env: { MAILSVC_HTTP_PORT: '4001' }, overrides: { http: { port: 4002 } } }).http.port).toBe(4002);
    expect(loadConfig({ env: { MAILSVC_CONFIG: file } }).http.port).toBe(4000);
  });

  it('reads config/local.json unless told not to; the test suite never does', () => {
    const root = mkdtempSync(join(tmpdir(), 'mailsvc-root-'));
    mkdirSync(join(root, 'config'));
    copyFileSync(join(PROJECT_ROOT, 'config/default.json'), join(root, 'config/default.json'));
    writeFileSync(join(root, 'config/local.json'), JSON.stringify({ http: { port: 3999 } }));
    expect(loadConfig({ root, env: {}, local: true }).http.port).toBe(3999);
    expect(loadConfig({ root, env: {}, local: false }).http.port).toBe(3000);
    expect(process.env.MAILSVC_NO_LOCAL_CONFIG).toBe('1');
    expect(loadConfig({ root, env: {} }).http.port).toBe(3000);
  });

  it('names every unknown or mistyped key', () => {
    const found = problems(() => loadConfig({ env: { MAILSVC_HTTP_PORT: 'eighty' }, overrides: { htp: {}, delivery: { tls: 'maybe', maxConnectionPerHost: 3 } } }));
    expect(found).toEqual(
      expect.arrayContaining([
        'htp: unknown key',
        'delivery.maxConnectionPerHost: unknown key',
        'http.port (from MAILSVC_HTTP_PORT): expected an integer from 0 to 65535, e.g. 3000 (got "eighty")',
        expect.stringMatching(/^delivery\.tls: /),
      ]),
    );
    expect(problems(() => loadConfig({ env: {}, overrides: { database: { client: 'pg' } } }))).toStrictEqual([
      'database.connection: a PostgreSQL connection string is required with client "pg"',
    ]);
    expect(problems(() => loadConfig({ env: { MAILSVC_DATABASE_POOL: '1' } }))).toStrictEqual([
      'database.pool (from MAILSVC_DATABASE_POOL): expected an integer from 2 to 200, e.g. 10 (got 1)',
    ]);
  });

  it('names the expected format with an example, and where the value came from', () => {
    expect(problems(() => loadConfig({ env: { MAILSVC_DELIVERY_RELAY_HOST: '127.0.0.1' } }))).toStrictEqual([
      'delivery.relayHost (from MAILSVC_DELIVERY_RELAY_HOST): expected host:port (the port is required), or null, e.g. smtp.example.com:587 (got "127.0.0.1")',
    ]);
    expect(problems(() => loadConfig({ env: {}, overrides: { dns: { servers: ['127.0.0.1', 53] }, delivery: { tls: 'maybe' } } }))).toStrictEqual([
      'dns.servers: expected a JSON array of "IP" or "IP:port" strings, e.g. ["127.0.0.1:5353"] (got 53 at item 1)',
      'delivery.tls: expected one of "opportunistic", "required", e.g. opportunistic (got "maybe")',
    ]);
    // A value the key takes as text stays text: a password of digits is not read as a number.
    const c = loadConfig({ env: { MAILSVC_DELIVERY_RELAY_PASSWORD: '12345', MAILSVC_DELIVERY_RELAY_HOST: 'null' } });
    expect(c.delivery.relayPassword).toBe('12345');
    expect(c.delivery.relayHost).toBeNull();
  });

  it('refuses a MAILSVC_* variable that sets nothing, naming the nearest one', () => {
    expect(problems(() => loadConfig({ env: { MAILSVC_HTTP_PROT: '1', MAILSVC_DELIVERY_RELAYHOST: 'a:1', MAILSVC_TEST_PG_URL: 'x' } }))).toStrictEqual([
      'MAILSVC_DELIVERY_RELAYHOST: no such setting; did you mean MAILSVC_DELIVERY_RELAY_HOST (delivery.relayHost)?',
      'MAILSVC_HTTP_PROT: no such setting; did you mean MAILSVC_HTTP_PORT (http.port)?',
    ]);
  });

  it('names tls.trustedCAs when its file cannot be read or holds no certificate', () => {
    expect(() => loadConfig({ env: {}, overrides: { tls: { trustedCAs: '/nonexistent/ca.pem' } } })).toThrow('tls.trustedCAs: cannot read /nonexistent/ca.pem (ENOENT)');
    expect(() => loadConfig({ env: {}, overrides: { tls: { trustedCAs: fileURLToPath(import.meta.url) } } })).toThrow('holds no PEM certificate');
  });

  it('names a submission.trustedNetworks entry that is no address or range, or whose key id is not a positive integer', () => {
    const trustedNetworks = [
      { network: '10.0.0.0/33', keyId: 1 },
      { network: '10.1.0.0/16', keyId: 0 },
    ];
    const found = problems(() => loadConfig({ env: {}, overrides: { submission: { trustedNetworks } } }));
    expect(found).toStrictEqual([
      'submission.trustedNetworks: expected a JSON array of {"network": CIDR, "keyId": API key id}, e.g. [{"network":"10.1.2.0/24","keyId":3}] (got 0 at item 1)',
    ]);
    expect(problems(() => loadConfig({ env: {}, overrides: { submission: { trustedNetworks: [trustedNetworks[0]] } } }))).toStrictEqual([
      'submission.trustedNetworks[0].network: "10.0.0.0/33" is not an IP address or a CIDR range (e.g. "10.0.0.0/8")',
    ]);
    const ok = loadConfig({ env: {}, overrides: { submission: { trustedNetworks: [{ network: '10.1.2.0/24', keyId: 3 }] } } });
    expect(ok.submission.trustedNetworks).toStrictEqual([{ network: '10.1.2.0/24', keyId: 3 }]);
  });

  it('keeps the pool name `none` for clearing a pool', () => {
    const delivery = { sourceAddresses: [{ address: '203.0.113.10', ehlo: 'mta1.example.com' }], pools: { none: ['203.0.113.10'] } };
    expect(problems(() => loadConfig({ env: {}, overrides: { delivery } }))).toStrictEqual([
      'delivery.pools.none: "none" is reserved (it clears a workspace\'s or domain\'s pool); name the pool otherwise',
    ]);
  });

  it('`MAILSVC_HTTP_PROT=1 mailsvc migrate` exits non-zero naming MAILSVC_HTTP_PORT, before touching the database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailsvc-cfg-'));
    const res = await runCli(['migrate'], { MAILSVC_HTTP_PROT: '1', MAILSVC_DATA_DIR: dir });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('MAILSVC_HTTP_PROT: no such setting; did you mean MAILSVC_HTTP_PORT (http.port)?');
    expect(res.stdout).toBe('');
    expect(readdirSync(dir)).toStrictEqual([]);
  });

  it('stops `mailsvc serve` at start with a message naming the bad key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailsvc-cfg-'));
    const file = join(dir, 'c.json');
    writeFileSync(file, JSON.stringify({ dataDir: dir, http: { prot: 3000 }, delivery: { leaseSeconds: 'long' } }));
    const res = await runCli(['--config', file, 'serve']);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/http\.prot: unknown key/);
    expect(res.stderr).toMatch(/delivery\.leaseSeconds: /);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{ "http": ');
    const res2 = await runCli(['--config', broken, 'serve']);
    expect(res2.code).not.toBe(0);
    expect(res2.stderr).toMatch(/broken\.json/);
  });
});
