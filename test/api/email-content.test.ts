import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.ts';
import { STORES } from '../helpers/stores.ts';

describe.each(STORES)('GET /emails/{id}/content (%s)', (kind) => {
  it('gives the message as sent: header fields, HTML, text and the MIME source', async () => {
    const server = await startTestServer(kind);
    const ws = await server.workspace();
    await server.verifiedDomain(ws.id, 'acme.test');
    const sent = await server.api('POST', '/emails', {
      key: ws.apiKey,
      body: {
        from: 'Acme <news@acme.test>',
        to: 'bob@example.net',
        subject: 'Ünïcode news',
        html: '<p>Hello <b>Bob</b></p>',
        text: 'Hello Bob',
        headers: { 'X-Campaign': 'autumn' },
      },
    });
    const res = await server.api('GET', `/emails/${sent.body.id}/content`, { key: ws.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.available).toBe(true);
    expect(res.body.html).toContain('<p>Hello <b>Bob</b></p>');
    expect(res.body.text.trim()).toBe('Hello Bob');
    const header = (name: string) => res.body.headers.find((h: { name: string }) => h.name.toLowerCase() === name)?.value;
    expect(header('subject')).toContain('=?UTF-8?');
    expect(header('x-campaign')).toBe('autumn');
    expect(header('from')).toBe('Acme <news@acme.test>');
    expect(res.body.raw).toMatch(/^[\s\S]*\r\nMIME-Version: 1\.0\r\n[\s\S]*multipart\/alternative/);
  });

  it('is a 404 for another workspace and for a domain key of another domain', async () => {
    const server = await startTestServer(kind);
    const ws = await server.workspace();
    const other = await server.workspace();
    await server.verifiedDomain(ws.id, 'acme.test');
    await server.verifiedDomain(ws.id, 'other.test');
    const sent = await server.api('POST', '/emails', { key: ws.apiKey, body: { from: 'news@acme.test', to: 'bob@example.net', subject: 's', text: 't' } });
    const scoped = await server.services.tenancy.createKey(ws.id, { domain: 'other.test' });
    expect((await server.api('GET', `/emails/${sent.body.id}/content`, { key: other.apiKey })).status).toBe(404);
    expect((await server.api('GET', `/emails/${sent.body.id}/content`, { key: scoped.secret })).status).toBe(404);
    // The sandbox inbox's parsed copies exist only in sandbox mode.
    const sandbox = await server.api('GET', '/sandbox/messages/1/content', { key: ws.apiKey });
    expect(sandbox.status).toBe(404);
    expect(sandbox.body.error).toMatch(/sandbox mode/);
  });
});
