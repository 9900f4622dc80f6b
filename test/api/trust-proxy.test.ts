import http from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.ts';
import { domainsRepo } from '../../src/store/domains.ts';
import { clickSigner } from '../../src/tracking/tokens.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * HTTP from a chosen loopback address (the whole 127.0.0.0/8 is loopback on Linux), so a test can
 * be a proxy at 127.0.0.1 and a stranger at 127.0.0.5 at once.
 */
function client(from: string) {
  const agent = new http.Agent({ keepAlive: true, localAddress: from } as http.AgentOptions);
  onTestFinished(() => agent.destroy());
  return (url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
    new Promise<Answer>((resolve, reject) => {
      const req = http.request(url, { method: opts.method ?? 'GET', agent, headers: opts.headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      });
      req.on('error', reject);
      req.end(opts.body);
    });
}

/** A sent message with click tracking on, and a signed click link for its recipient. */
async function clickWorld(config: Record<string, unknown> = {}) {
  const server = await startTestServer('sqlite', { config });
  const ws = await server.workspace();
  await server.verifiedDomain(ws.id, 'acme.test');
  const domain = (await domainsRepo.byName(server.services.db, 'acme.test'))!;
  await domainsRepo.update(server.services.db, domain.id, { click_tracking: true });
  const sent = await server.api('POST', '/emails', { key: ws.apiKey, body: { from: 'a@acme.test', to: 'one@dest.test', subject: 's', text: 't' } });
  expect(sent.status).toBe(201);
  const recipient = await server.services.db('recipients').where({ message_id: sent.body.id }).first();
  const link = `${server.url}/t/c/${clickSigner(server.services.tokens.click, recipient.id)('https://shop.example/')}`;
  const clicks = async () =>
    (await server.services.db('events').where({ email_id: sent.body.id, event: 'email.clicked' }).orderBy('id')).map(
      (r: { payload: string }) => JSON.parse(r.payload).provider.ip as string,
    );
  return { server, ws, link, clicks };
}

const signIn = (server: TestServer, get: ReturnType<typeof client>, key: string, headers: Record<string, string>) =>
  get(`${server.url}/console/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ api_key: key }),
  });

describe('forwarded headers', () => {
  it('from anyone, by default, change nothing: events keep the real address and the per-IP limit holds', async () => {
    const { link, clicks } = await clickWorld();
    const stranger = client('127.0.0.5');
    const statuses: number[] = [];
    // The per-IP limit is 600 hits a minute; each hit claims another client address.
    for (let i = 0; i < 601; i++) {
      statuses.push((await stranger(link, { headers: { 'X-Forwarded-For': `198.51.100.${i % 250}, 203.0.113.${i % 200}` } })).status);
    }
    expect(statuses.slice(0, 600).every((s) => s === 302)).toBe(true);
    expect(statuses[600]).toBe(429);
    // One event (identical hits from one address within 10 s count once), with the socket's address.
    expect(await clicks()).toStrictEqual(['127.0.0.5']);
  });

  it('from anyone, by default, do not pass the console sign-in origin check', async () => {
    const { server, ws } = await clickWorld();
    const stranger = client('127.0.0.5');
    const forged = await signIn(server, stranger, ws.apiKey, { origin: 'https://evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' });
    expect(forged.status).toBe(403);
    expect(JSON.parse(forged.body).error).toMatch(/^Cross-origin request refused/);
    expect(forged.headers['set-cookie']).toBeUndefined();
    // The server's own origin still signs in.
    expect((await signIn(server, stranger, ws.apiKey, { origin: server.url })).status).toBe(200);
  });

  it('from a configured proxy count: its client address is recorded and limited; others are still ignored', async () => {
    const { server, ws, link, clicks } = await clickWorld({ http: { host: '127.0.0.1', port: 0, trustProxy: ['127.0.0.1/32'] } });
    const proxy = client('127.0.0.1');
    const stranger = client('127.0.0.5');
    expect((await proxy(link, { headers: { 'X-Forwarded-For': '198.51.100.7' } })).status).toBe(302);
    expect((await stranger(link, { headers: { 'X-Forwarded-For': '198.51.100.8' } })).status).toBe(302);
    // A chain: the proxy appended the address it saw; what the client wrote before it is not believed.
    expect((await proxy(link, { headers: { 'X-Forwarded-For': '203.0.113.66, 198.51.100.9' } })).status).toBe(302);
    expect(await clicks()).toStrictEqual(['198.51.100.7', '127.0.0.5', '198.51.100.9']);

    // The console sees the host and scheme the proxy forwards: the Secure cookie, the public origin.
    const viaProxy = await signIn(server, proxy, ws.apiKey, { origin: 'https://mail.example.com', 'x-forwarded-host': 'mail.example.com', 'x-forwarded-proto': 'https' });
    expect(viaProxy.status).toBe(200);
    expect(viaProxy.headers['set-cookie']?.[0]).toContain('Secure');
    const notProxy = await signIn(server, stranger, ws.apiKey, {
      origin: 'https://mail.example.com',
      'x-forwarded-host': 'mail.example.com',
      'x-forwarded-proto': 'https',
    });
    expect(notProxy.status).toBe(403);
  });

  it('http.trustProxy takes addresses and CIDR ranges only, checked at start', () => {
    const load = (trustProxy: unknown) => loadConfig({ env: {}, local: false, overrides: { http: { trustProxy } } });
    expect(load(['10.0.0.0/8', '::1', '2001:db8::/32']).http.trustProxy).toStrictEqual(['10.0.0.0/8', '::1', '2001:db8::/32']);
    expect(load([]).http.trustProxy).toStrictEqual([]);
    for (const bad of [['1.2.3'], ['10.0.0.0/33'], ['::1/129']]) {
      expect(() => load(bad)).toThrow(ConfigError);
      expect(() => load(bad)).toThrow(/http\.trustProxy/);
    }
    expect(() => load(true)).toThrow(/http\.trustProxy/);
  });
});
