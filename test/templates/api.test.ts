import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.ts';
import { STORES } from '../helpers/stores.ts';

const WELCOME = {
  name: 'welcome',
  subject: 'Welcome, {{first_name}}',
  html: '<p>Hello {{first_name}} from {{ company.name }}</p>{{! a comment }}',
  text: 'Hello {{first_name}}',
};

describe.each(STORES)('templates API (%s)', (kind) => {
  it('creates, shows, lists, updates and deletes templates, naming the placeholders each uses', async () => {
    const server = await startTestServer(kind);
    const { apiKey } = await server.workspace();
    const call = (method: string, path: string, body?: unknown) => server.api(method, path, { key: apiKey, body });

    const created = await call('POST', '/templates', WELCOME);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ ...WELCOME, variables: ['company.name', 'first_name'] });
    expect(created.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(created.body.updated_at).toBe(created.body.created_at);
    const id = created.body.id;
    expect((await call('GET', `/templates/${id}`)).body).toStrictEqual(created.body);

    const textOnly = await call('POST', '/templates', { name: 'receipt', subject: 'Receipt {{number}}', text: 'Total {{{total}}}' });
    expect(textOnly.status).toBe(201);
    expect([textOnly.body.html, textOnly.body.variables]).toStrictEqual([null, ['number', 'total']]);

    // Newest first, keyset pages.
    const first = await call('GET', '/templates?limit=1');
    expect(first.body.data.map((t: { name: string }) => t.name)).toStrictEqual(['receipt']);
    const second = await call('GET', `/templates?limit=1&cursor=${first.body.next_cursor}`);
    expect([second.body.data.map((t: { name: string }) => t.name), second.body.next_cursor]).toStrictEqual([['welcome'], null]);
    expect((await call('GET', '/templates?limit=101')).status).toBe(422);

    const patched = await call('PATCH', `/templates/${id}`, { name: 'hello', html: null, text: 'Hi {{nick}}' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'hello', subject: WELCOME.subject, html: null, text: 'Hi {{nick}}', variables: ['first_name', 'nick'] });
    expect((await call('GET', `/templates/${id}`)).body).toStrictEqual(patched.body);
    const bare = await call('PATCH', `/templates/${id}`, { text: null });
    expect([bare.status, bare.body.error]).toStrictEqual([422, 'Give at least one of `html` or `text`: a template cannot lose both']);

    expect((await call('DELETE', `/templates/${id}`)).body).toStrictEqual({ id, deleted: true });
    expect((await call('GET', `/templates/${id}`)).status).toBe(404);
    expect((await call('DELETE', `/templates/${id}`)).status).toBe(404);
  });

  it('refuses bad names, duplicates, a missing subject or body, and unknown fields with a 422 naming them', async () => {
    const server = await startTestServer(kind);
    const { apiKey } = await server.workspace();
    const other = await server.workspace();
    const create = async (body: unknown, key = apiKey) => {
      const res = await server.api('POST', '/templates', { key, body });
      return [res.status, res.body.error];
    };
    expect(await create(WELCOME)).toStrictEqual([201, undefined]);
    expect(await create({ ...WELCOME, html: '<p>x</p>' })).toStrictEqual([422, 'A template named `welcome` already exists in this workspace']);
    // Names are unique per workspace, not across them.
    expect(await create(WELCOME, other.apiKey)).toStrictEqual([201, undefined]);
    expect(await create({ ...WELCOME, name: '2024' })).toStrictEqual([422, 'Field `name` must not be all digits: a send names a template by id or by name']);
    expect((await create({ ...WELCOME, name: '' }))[0]).toBe(422);
    expect((await create({ ...WELCOME, name: 'x'.repeat(101) }))[0]).toBe(422);
    expect(await create({ ...WELCOME, name: 'a\nb' })).toStrictEqual([422, 'Field `name` must not contain control characters']);
    const { subject: _, ...noSubject } = WELCOME;
    expect((await create(noSubject))[1]).toMatch(/subject/);
    expect(await create({ ...WELCOME, name: 'blank', subject: '  ' })).toStrictEqual([422, 'Field `subject` must not be empty']);
    expect(await create({ ...WELCOME, name: 'broken', subject: 'a\r\nBcc: x@y.example' })).toStrictEqual([422, 'Field `subject` must not contain line breaks']);
    expect(await create({ name: 'empty', subject: 's' })).toStrictEqual([422, 'Give at least one of `html` or `text`']);
    expect((await create({ ...WELCOME, name: 'extra', from: 'a@b.example' }))[1]).toMatch(/from/);
    const renamed = await server.api('POST', '/templates', { key: apiKey, body: { ...WELCOME, name: 'other' } });
    const taken = await server.api('PATCH', `/templates/${renamed.body.id}`, { key: apiKey, body: { name: 'welcome' } });
    expect([taken.status, taken.body.error]).toStrictEqual([422, 'A template named `welcome` already exists in this workspace']);
  });

  it('refuses sections, inverted sections, partials, delimiter changes and unclosed tags when saved, naming the field and the tag', async () => {
    const server = await startTestServer(kind);
    const { apiKey } = await server.workspace();
    const error = async (part: Record<string, string>) => {
      const res = await server.api('POST', '/templates', { key: apiKey, body: { name: 'x', subject: 's', text: 't', ...part } });
      expect(res.status).toBe(422);
      return res.body.error;
    };
    expect(await error({ html: '<ul>{{#items}}<li>{{name}}</li>{{/items}}</ul>' })).toBe(
      'Field `html` has the tag "{{#items}}", a section: templates take only variables ({{name}}, {{{name}}}) and comments',
    );
    expect(await error({ text: 'Hi {{^admin}}guest{{/admin}}' })).toBe(
      'Field `text` has the tag "{{^admin}}", an inverted section: templates take only variables ({{name}}, {{{name}}}) and comments',
    );
    expect(await error({ html: '{{> footer}}' })).toBe(
      'Field `html` has the tag "{{> footer}}", a partial: templates take only variables ({{name}}, {{{name}}}) and comments',
    );
    expect(await error({ subject: '{{=<% %>=}} <% x %>' })).toBe(
      'Field `subject` has the tag "{{=<% %>=}}", a delimiter change: templates take only variables ({{name}}, {{{name}}}) and comments',
    );
    expect(await error({ text: 'Hello {{name' })).toBe('Field `text` is not a valid template: Unclosed tag at 12');
    expect(await error({ html: 'a {{/x}}' })).toBe('Field `html` is not a valid template: Unopened section "x" at 2');
    expect(await error({ html: 'a {{.}}' })).toBe('Field `html` has the tag "{{.}}": a variable name is letters, digits, _ or -, with dots between nested names');
    const id = (await server.api('POST', '/templates', { key: apiKey, body: WELCOME })).body.id;
    const patched = await server.api('PATCH', `/templates/${id}`, { key: apiKey, body: { text: '{{#x}}y{{/x}}' } });
    expect([patched.status, patched.body.error]).toStrictEqual([
      422,
      'Field `text` has the tag "{{#x}}", a section: templates take only variables ({{name}}, {{{name}}}) and comments',
    ]);
    expect((await server.api('GET', `/templates/${id}`, { key: apiKey })).body.text).toBe(WELCOME.text);
  });

  it('lets a domain-scoped key list, read and render templates but not create, change or delete them; another workspace gets 404', async () => {
    const server = await startTestServer(kind);
    const ws = await server.workspace();
    const other = await server.workspace();
    await server.verifiedDomain(ws.id, 'acme.test');
    const scoped = (await server.services.tenancy.createKey(ws.id, { domain: 'acme.test' })).secret;
    const id = (await server.api('POST', '/templates', { key: ws.apiKey, body: WELCOME })).body.id;

    const forbidden = 'A domain-scoped API key cannot create, change or delete templates; use a workspace key';
    for (const [method, path, body] of [
      ['POST', '/templates', { ...WELCOME, name: 'mine' }],
      ['PATCH', `/templates/${id}`, { subject: 'x' }],
      ['DELETE', `/templates/${id}`, undefined],
    ] as const) {
      const res = await server.api(method, path, { key: scoped, body });
      expect([method, res.status, res.body.error]).toStrictEqual([method, 403, forbidden]);
    }
    expect((await server.api('GET', '/templates', { key: scoped })).body.data.map((t: { id: number }) => t.id)).toStrictEqual([id]);
    expect((await server.api('GET', `/templates/${id}`, { key: scoped })).body.name).toBe('welcome');
    const rendered = await server.api('POST', `/templates/${id}/render`, { key: scoped, body: { variables: { first_name: 'Ann', company: { name: 'Acme' } } } });
    expect(rendered.body).toStrictEqual({ subject: 'Welcome, Ann', html: '<p>Hello Ann from Acme</p>', text: 'Hello Ann' });

    for (const [method, path, body] of [
      ['GET', `/templates/${id}`, undefined],
      ['PATCH', `/templates/${id}`, { subject: 'x' }],
      ['DELETE', `/templates/${id}`, undefined],
      ['POST', `/templates/${id}/render`, { variables: {} }],
    ] as const) {
      const res = await server.api(method, path, { key: other.apiKey, body });
      expect([method, res.status, res.body]).toStrictEqual([method, 404, { error: 'Not found' }]);
    }
    expect((await server.api('GET', '/templates', { key: other.apiKey })).body.data).toStrictEqual([]);
    expect((await server.api('GET', `/templates/${id}`, { key: ws.apiKey })).body.subject).toBe(WELCOME.subject);
  });

  it('documents the template routes in the OpenAPI document', async () => {
    const server = await startTestServer(kind);
    const doc = (await server.api('GET', '/openapi.json')).body;
    expect(Object.keys(doc.paths).filter((p) => p.includes('templates'))).toStrictEqual(['/api/v1/templates', '/api/v1/templates/{id}', '/api/v1/templates/{id}/render']);
    expect(doc.paths['/api/v1/templates'].post.requestBody.content['application/json'].schema.additionalProperties).toBe(false);
  });
});
