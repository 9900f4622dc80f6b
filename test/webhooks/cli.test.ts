import { describe, expect, it } from 'vitest';
import { oneJson, runCli } from '../helpers/cli.ts';
import { startTestServer } from '../helpers/server.ts';
import { signatureValid, startReceiver } from './receiver.ts';

describe('mailsvc webhook', () => {
  it('adds, lists, shows, tests, enables an endpoint and reads its log', { timeout: 120_000 }, async () => {
    const server = await startTestServer('sqlite', { config: { webhooks: { allowPrivateAddresses: true, timeout: 5 } } });
    await server.workspace('acme');
    let answer = { status: 200, body: 'got it' };
    const receiver = await startReceiver(() => answer);
    const cli = (...args: string[]) => runCli(['--config', server.configFile, 'webhook', ...args]);

    const added = oneJson(await cli('add', receiver.url, '--events', 'email.bounced,email.complained', '--json'));
    expect(added).toMatchObject({ url: receiver.url, events: ['email.bounced', 'email.complained'], status: 'active', failure_count: 0 });
    expect(added.secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    expect(oneJson(await cli('list', '--json')).map((w: { id: number }) => w.id)).toStrictEqual([added.id]);
    expect(oneJson(await cli('show', String(added.id), '--json'))).toStrictEqual(added);

    const tested = oneJson(await cli('test', String(added.id), '--json'));
    expect(tested).toMatchObject({ ok: true, response_code: 200, response_body: 'got it', error: null });
    const [req] = await receiver.waitFor(1);
    expect(signatureValid(req, added.secret)).toBe(true);
    const sent = JSON.parse(req.raw.toString());
    expect(sent).toMatchObject({ event: 'email.delivered', email_id: 0 });
    expect(Object.keys(sent.provider).slice(0, 2)).toStrictEqual(['response', 'reporting_mta']);

    answer = { status: 500, body: 'broken' };
    const failed = await cli('test', String(added.id));
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain(`POST ${receiver.url}: 500`);
    expect(failed.stderr).toContain(`webhook ${added.id} did not answer 2xx: HTTP 500`);

    await server.services.db('webhook_endpoints').where({ id: added.id }).update({ status: 'disabled', failure_count: 12 });
    expect(oneJson(await cli('enable', String(added.id), '--json'))).toMatchObject({ status: 'active', failure_count: 0 });
    expect(oneJson(await cli('deliveries', String(added.id), '--json'))).toStrictEqual([]);
    const missing = await cli('show', '999');
    expect([missing.code, missing.stderr.trim()]).toStrictEqual([1, 'error: webhook "999" not found']);
  });
});
