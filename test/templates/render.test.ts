import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.ts';
import type { StoreKind } from '../helpers/stores.ts';

/** A server and a workspace with one template; `render` previews it with variables. */
async function world(kind: StoreKind, template: Record<string, string>, config?: Record<string, unknown>) {
  const server = await startTestServer(kind, { config });
  const { apiKey } = await server.workspace();
  const created = await server.api('POST', '/templates', { key: apiKey, body: { name: 't', subject: 's', ...template } });
  expect(created.status).toBe(201);
  const render = (variables: unknown) => server.api('POST', `/templates/${created.body.id}/render`, { key: apiKey, body: { variables } });
  return { server, apiKey, id: created.body.id as number, render };
}

// The rules are the same on every database; storing templates and a recipient's `tls` is
// tested on both (test/templates/api.test.ts, test/store/recipient-tls-migration.test.ts).
describe.each(['sqlite'] as const)('rendering a template (%s)', (kind) => {
  it('escapes {{name}} in html only; {{{name}}} and {{& name}} stay as given; subject and text are never escaped', async () => {
    const w = await world(kind, {
      subject: 'For {{who}} & co',
      html: '<p>{{who}}</p><div>{{{who}}}</div><div>{{& who}}</div><a href="/x?q={{q}}">{{n}} {{ok}}</a>',
      text: 'Dear {{who}}, {{n}} {{ok}} {{{who}}}',
    });
    const who = `<script>alert("x")</script>'`;
    const res = await w.render({ who, q: 'a=b&c', n: 4.5, ok: false });
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({
      subject: `For ${who} & co`,
      html: '<p>&lt;script&gt;alert(&quot;x&quot;)&lt;&#x2F;script&gt;&#39;</p>' + `<div>${who}</div><div>${who}</div>` + '<a href="/x?q=a&#x3D;b&amp;c">4.5 false</a>',
      text: `Dear ${who}, 4.5 false ${who}`,
    });
  });

  it('resolves dotted names through nested objects', async () => {
    const w = await world(kind, { subject: 'Hi {{user.first}}', text: '{{user.address.city}} {{plan}}' });
    const res = await w.render({ user: { first: 'Ann', address: { city: 'Oslo' } }, plan: 'pro', unused: 'x' });
    expect(res.body).toStrictEqual({ subject: 'Hi Ann', html: null, text: 'Oslo pro' });
  });

  it('refuses a missing or null variable, naming it, and never takes one from Object.prototype', async () => {
    const w = await world(kind, { text: 'Hello {{first_name}} {{user.last}}' });
    const error = async (variables: unknown) => {
      const res = await w.render(variables);
      expect(res.status).toBe(422);
      return res.body.error;
    };
    expect(await error({ user: { last: 'B' } })).toBe('Missing template variable `first_name`');
    expect(await error({ first_name: null, user: { last: 'B' } })).toBe('Missing template variable `first_name`');
    expect(await error({ first_name: 'A' })).toBe('Missing template variable `user.last`');
    expect(await error({ first_name: 'A', user: 'B' })).toBe('Missing template variable `user.last`');
    expect(await error({ first_name: 'A', user: ['B'] })).toBe('Missing template variable `user.last`');

    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'constructor.name', 'x.__proto__']) {
      const created = await w.server.api('POST', '/templates', { key: w.apiKey, body: { name, subject: 's', html: `<p>{{${name}}}</p>`, text: `{{{${name}}}}` } });
      const res = await w.server.api('POST', `/templates/${created.body.id}/render`, { key: w.apiKey, body: { variables: { x: {} } } });
      expect([name, res.status, res.body.error]).toStrictEqual([name, 422, `Missing template variable \`${name}\``]);
    }
  });

  it('refuses an object or array as a value, naming the variable', async () => {
    const w = await world(kind, { text: '{{a}} {{b}}' });
    expect((await w.render({ a: { x: 1 }, b: 'ok' })).body.error).toBe('Template variable `a` must be a string, number or boolean, not an object');
    expect((await w.render({ a: 'ok', b: [1, 2] })).body.error).toBe('Template variable `b` must be a string, number or boolean, not an array');
  });

  it('refuses a line break a variable would put into the subject, naming the variable', async () => {
    const w = await world(kind, { subject: 'Order {{number}} for {{who}}', text: '{{who}}' });
    const res = await w.render({ number: '42', who: 'Ann\r\nBcc: victim@example.org' });
    expect([res.status, res.body.error]).toStrictEqual([422, 'Template variable `who` must not contain line breaks: it is used in the subject']);
    // The same value is fine in the body.
    const body = await world(kind, { subject: 'Order {{number}}', text: '{{who}}' });
    expect((await body.render({ number: '42', who: 'Ann\r\nBob' })).body.text).toBe('Ann\r\nBob');
    expect((await body.render({ number: 'x'.repeat(999), who: 'a' })).body.error).toBe('The subject rendered from the template is longer than 998 characters');
  });

  it('refuses, without building it, a render over tracking.maxRenderedBytes: a 1 MB value used 10,000 times', async () => {
    const w = await world(kind, { html: '<p>{{v}}</p>'.repeat(10_000) });
    const started = performance.now();
    const res = await w.render({ v: 'x'.repeat(1_000_000) });
    const took = performance.now() - started;
    expect([res.status, res.body.error]).toStrictEqual([
      422,
      'The template renders to more than 12582912 bytes with these variables; at most 12582912 rendered bytes per message',
    ]);
    // Building the 10 GB string would take minutes or fail; counting takes milliseconds.
    expect(took).toBeLessThan(2000);
  });

  it('counts escaped values at their escaped size against the limit', async () => {
    const w = await world(kind, { html: '{{v}}', text: 'x' }, { tracking: { maxRenderedBytes: 2048 } });
    // 600 bytes as given, 2,400 once escaped (`&lt;` is 4).
    expect((await w.render({ v: '<'.repeat(600) })).status).toBe(422);
    const raw = await world(kind, { html: '{{{v}}}', text: 'x' }, { tracking: { maxRenderedBytes: 2048 } });
    expect((await raw.render({ v: '<'.repeat(600) })).body.html).toBe('<'.repeat(600));
  });

  it('counts exactly what it renders: a limit of the rendered size passes, one byte less is refused', async () => {
    // Subject 1 byte, text 1 byte, and 200 × ("é" 2 bytes + "&lt;" 4 bytes) of HTML: 1,202 bytes.
    const v = 'é<'.repeat(200);
    const fits = await world(kind, { html: '{{v}}', text: 'x' }, { tracking: { maxRenderedBytes: 1202 } });
    const res = await fits.render({ v });
    expect(res.status).toBe(200);
    expect(Buffer.byteLength(res.body.subject + res.body.html + res.body.text)).toBe(1202);
    const over = await world(kind, { html: '{{v}}', text: 'x' }, { tracking: { maxRenderedBytes: 1201 } });
    expect((await over.render({ v })).body.error).toBe('The template renders to more than 1201 bytes with these variables; at most 1201 rendered bytes per message');
  });
});
