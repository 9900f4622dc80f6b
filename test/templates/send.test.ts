import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.ts';
import { STORES, type StoreKind } from '../helpers/stores.ts';

async function world(kind: StoreKind) {
  const server = await startTestServer(kind);
  const ws = await server.sender('a', 'acme.test');
  const other = await server.sender('b', 'beta.test');
  const template = await server.api('POST', '/templates', {
    key: ws.apiKey,
    body: {
      name: 'welcome',
      subject: 'Welcome, {{first_name}}',
      html: '<p>Hello {{first_name}}</p><p>{{{signature}}}</p>',
      text: 'Hello {{first_name}}\n{{signature}}',
    },
  });
  const send = (body: Record<string, unknown>, key = ws.apiKey) =>
    server.api('POST', '/emails', { key, body: { from: 'news@acme.test', to: 'bob@example.net', ...body } });
  const content = async (id: number) => (await server.api('GET', `/emails/${id}/content`, { key: ws.apiKey })).body;
  return { server, ws, other, templateId: template.body.id as number, send, content };
}

describe.each(STORES)('sending with a template (%s)', (kind) => {
  it('sends the rendered subject, HTML and text, the template named by name or by id', async () => {
    const w = await world(kind);
    const variables = { first_name: '<script>x</script>', signature: '<b>Acme</b>' };
    const byName = await w.send({ template: 'welcome', variables });
    expect(byName.status).toBe(201);
    const message = (await w.server.api('GET', `/emails/${byName.body.id}`, { key: w.ws.apiKey })).body;
    expect(message.subject).toBe('Welcome, <script>x</script>');
    const sent = await w.content(byName.body.id);
    expect(sent.html).toContain('<p>Hello &lt;script&gt;x&lt;&#x2F;script&gt;</p><p><b>Acme</b></p>');
    expect(sent.text.replace(/\r\n/g, '\n').trim()).toBe('Hello <script>x</script>\n<b>Acme</b>');

    for (const template of [w.templateId, String(w.templateId)]) {
      const byId = await w.send({ template, variables: { first_name: 'Ann', signature: 'A' } });
      expect(byId.status).toBe(201);
      expect((await w.server.api('GET', `/emails/${byId.body.id}`, { key: w.ws.apiKey })).body.subject).toBe('Welcome, Ann');
    }

    // A change is used by the next send at once.
    await w.server.api('PATCH', `/templates/${w.templateId}`, { key: w.ws.apiKey, body: { subject: 'Hi again, {{first_name}}' } });
    const after = await w.send({ template: 'welcome', variables: { first_name: 'Ann', signature: 'A' } });
    expect((await w.server.api('GET', `/emails/${after.body.id}`, { key: w.ws.apiKey })).body.subject).toBe('Hi again, Ann');

    // A domain-scoped key sends with the workspace's templates.
    const scoped = (await w.server.services.tenancy.createKey(w.ws.id, { domain: 'acme.test' })).secret;
    expect((await w.send({ template: 'welcome', variables: { first_name: 'Ann', signature: 'A' } }, scoped)).status).toBe(201);
  });

  it('refuses with a 422 naming the field: subject, html or text beside a template, variables without one, an unknown template, a missing variable', async () => {
    const w = await world(kind);
    const error = async (body: Record<string, unknown>, key?: string) => {
      const res = await w.send(body, key);
      expect(res.status).toBe(422);
      return res.body.error;
    };
    const variables = { first_name: 'Ann', signature: 'A' };
    expect(await error({ template: 'welcome', variables, subject: 'Hi' })).toBe('Field `subject` cannot be given with `template`: the template gives it');
    expect(await error({ template: 'welcome', variables, html: '<p>x</p>' })).toBe('Field `html` cannot be given with `template`: the template gives it');
    expect(await error({ template: 'welcome', variables, text: 'x' })).toBe('Field `text` cannot be given with `template`: the template gives it');
    expect(await error({ subject: 'Hi', text: 'x', variables })).toBe('Field `variables` needs `template`: it fills the placeholders of a stored template');
    expect(await error({ template: 'nope', variables })).toBe('Unknown template `nope`');
    expect(await error({ template: 999_999, variables })).toBe('Unknown template `999999`');
    expect(await error({ template: 'welcome', variables: { signature: 'A' } })).toBe('Missing template variable `first_name`');
    expect(await error({ template: 'welcome' })).toBe('Missing template variable `first_name`');
    // Another workspace's template, by id or name, is unknown here.
    expect(await error({ from: 'x@beta.test', template: w.templateId, variables }, w.other.apiKey)).toBe(`Unknown template \`${w.templateId}\``);
    expect(await error({ from: 'x@beta.test', template: 'welcome', variables }, w.other.apiKey)).toBe('Unknown template `welcome`');
    expect((await w.server.api('GET', '/emails', { key: w.ws.apiKey })).body.data).toStrictEqual([]);
  });

  it('is refused once the template is deleted', async () => {
    const w = await world(kind);
    const variables = { first_name: 'Ann', signature: 'A' };
    expect((await w.send({ template: 'welcome', variables })).status).toBe(201);
    await w.server.api('DELETE', `/templates/${w.templateId}`, { key: w.ws.apiKey });
    const res = await w.send({ template: 'welcome', variables });
    expect([res.status, res.body.error]).toStrictEqual([422, 'Unknown template `welcome`']);
  });
});
