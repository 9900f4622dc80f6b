import { describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { STORES } from '../helpers/stores.ts';

/** What a browser on the console's page sends, as plain HTTP requests. */
async function signIn(server: TestServer, apiKey: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/console/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: server.url, ...headers },
    body: JSON.stringify({ api_key: apiKey }),
  });
  const setCookie = res.headers.get('set-cookie') ?? '';
  return { res, setCookie, cookie: setCookie.split(';')[0], body: (await res.json()) as { csrf_token: string; scope: string } };
}

function call(server: TestServer, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  return fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

describe.each(STORES)('console sessions (%s)', (kind) => {
  it('signs in with a key into an HttpOnly, SameSite=Strict cookie that does not hold the key', async () => {
    // Behind a TLS-terminating proxy at 127.0.0.1 (the Secure cookie below).
    const server = await startTestServer(kind, { config: { http: { host: '127.0.0.1', port: 0, trustProxy: ['127.0.0.1'] } } });
    const ws = await server.workspace();
    const { res, setCookie, cookie, body } = await signIn(server, ws.apiKey);
    expect(res.status).toBe(200);
    expect(setCookie).toMatch(/^mailsvc_session=s1\./);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).not.toContain('Secure');
    expect(cookie).not.toContain(ws.apiKey.slice(3, 11));
    expect(body.scope).toBe('workspace');

    expect((await call(server, 'GET', '/emails', { cookie })).status).toBe(200);
    const secure = await signIn(server, ws.apiKey, { 'x-forwarded-proto': 'https', origin: server.url.replace('http:', 'https:') });
    expect(secure.setCookie).toContain('Secure');
  });

  it('refuses a state change without the CSRF token, from another origin, or with no origin at all', async () => {
    const server = await startTestServer(kind);
    const ws = await server.workspace();
    const { cookie, body } = await signIn(server, ws.apiKey);
    const entry = { address: 'csrf@example.org', stream: 'transactional' };
    const csrf = body.csrf_token;

    const noToken = await call(server, 'POST', '/suppressions', { cookie, origin: server.url }, entry);
    expect(noToken.status).toBe(403);
    expect(await noToken.json()).toEqual({ error: 'Missing or invalid CSRF token' });
    const wrongToken = await call(server, 'POST', '/suppressions', { cookie, origin: server.url, 'x-csrf-token': csrf.slice(1) + 'x' }, entry);
    expect(wrongToken.status).toBe(403);
    const otherOrigin = await call(server, 'POST', '/suppressions', { cookie, origin: 'https://evil.example', 'x-csrf-token': csrf }, entry);
    expect(otherOrigin.status).toBe(403);
    expect((await otherOrigin.json()).error).toMatch(/^Cross-origin request refused/);
    const otherReferer = await call(server, 'DELETE', '/suppressions/transactional/csrf@example.org', { cookie, referer: 'http://127.0.0.2:1/x', 'x-csrf-token': csrf });
    expect(otherReferer.status).toBe(403);
    expect((await call(server, 'POST', '/suppressions', { cookie, 'x-csrf-token': csrf }, entry)).status).toBe(403);
    // None of the refused requests changed anything.
    expect((await server.api('GET', '/suppressions', { key: ws.apiKey })).body.data).toEqual([]);

    const ok = await call(server, 'POST', '/suppressions', { cookie, origin: server.url, 'x-csrf-token': csrf }, entry);
    expect(ok.status).toBe(201);
    // A token is bound to its cookie: another session's token does not fit.
    const other = await signIn(server, ws.apiKey);
    expect(
      (await call(server, 'DELETE', '/suppressions/transactional/csrf@example.org', { cookie, origin: server.url, 'x-csrf-token': other.body.csrf_token })).status,
    ).toBe(403);
    // Bearer requests carry no ambient credential and need neither.
    expect((await server.api('DELETE', '/suppressions/transactional/csrf@example.org', { key: ws.apiKey })).status).toBe(200);
  });

  it('refuses a sign-in from another origin, a forged or altered cookie, and a revoked key', async () => {
    const server = await startTestServer(kind);
    const ws = await server.workspace();
    expect((await signIn(server, ws.apiKey, { origin: 'https://evil.example' })).res.status).toBe(403);
    expect((await signIn(server, 'mk_' + 'A'.repeat(32))).res.status).toBe(401);

    const { cookie } = await signIn(server, ws.apiKey);
    const [name, value] = cookie.split('=');
    const parts = value.split('.');
    parts[2] = String(Number(parts[2]) + 1); // another key's id, same signature
    const altered = `${name}=${parts.join('.')}`;
    const res = await call(server, 'GET', '/emails', { cookie: altered });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'Invalid or missing API key' });
    expect((await call(server, 'GET', '/emails', { cookie: `${name}=s1.x.1.99999999999.n.sig` })).status).toBe(401);

    const [key] = await server.services.tenancy.listKeys(ws.id);
    await server.services.tenancy.revokeKey(key.id);
    expect((await call(server, 'GET', '/emails', { cookie })).status).toBe(401);
    expect((await fetch(`${server.url}/console/session`, { headers: { cookie } })).status).toBe(401);
  });

  it('signs out by clearing the cookie; a domain key keeps its scope', async () => {
    const server = await startTestServer(kind);
    const ws = await server.workspace();
    await server.verifiedDomain(ws.id, 'scoped.test');
    const key = await server.services.tenancy.createKey(ws.id, { domain: 'scoped.test' });
    const { cookie, body } = await signIn(server, key.secret);
    expect(body.scope).toBe('domain:scoped.test');
    const refused = await call(server, 'GET', '/webhooks', { cookie });
    expect(refused.status).toBe(403);

    const out = await fetch(`${server.url}/console/session`, { method: 'DELETE', headers: { cookie, origin: server.url, 'x-csrf-token': body.csrf_token } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^mailsvc_session=; .*Max-Age=0/);
  });

  it('serves the page with a strict Content-Security-Policy', async () => {
    const server = await startTestServer(kind);
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await res.text();
    expect(html).not.toMatch(/<script>(?!<\/script>)/);
    expect(html).toContain('src="/assets/console.js"');
    const js = await fetch(`${server.url}/assets/console.js`);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
  });
});
