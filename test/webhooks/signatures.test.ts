import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PROJECT_ROOT } from '../../src/config/load.ts';
import { signature, standardSignature } from '../../src/webhooks/post.ts';
import { newSecret } from '../../src/webhooks/endpoint-service.ts';
import { ManualClock } from '../helpers/clock.ts';
import { hookWorld, until } from './world.ts';
import { startReceiver, type Received } from './receiver.ts';

interface Snippet {
  TOLERANCE_SECONDS: number;
  verifyServiceSignature(secret: string, raw: Buffer, header: string | undefined): boolean;
  verifyStandardWebhook(secret: string, raw: Buffer, headers: Record<string, unknown>, nowSeconds?: number): boolean;
}

/** The `verify-webhook.mjs` block of docs/WEBHOOKS.md, run as a receiver would run it. */
async function documentedVerifier(): Promise<Snippet> {
  const page = readFileSync(join(PROJECT_ROOT, 'docs/WEBHOOKS.md'), 'utf8');
  const block = /```js\n(\/\/ verify-webhook\.mjs\n[\s\S]*?)```/.exec(page);
  if (!block) throw new Error('docs/WEBHOOKS.md has no verify-webhook.mjs block');
  const dir = mkdtempSync(join(tmpdir(), 'verify-webhook-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'verify-webhook.mjs'), block[1]);
  return (await import(pathToFileURL(join(dir, 'verify-webhook.mjs')).href)) as Snippet;
}

const seconds = (ms: number) => Math.floor(ms / 1000);

describe('webhook signatures', () => {
  it('match the Standard Webhooks reference vector and keep X-Service-Signature as the interface defines it', () => {
    // The published test vector of the Standard Webhooks libraries; its secret has our shape.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(standardSignature(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    expect(secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    expect(newSecret()).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    // sha256= and the lowercase hex HMAC of the body, keyed by the whole secret string (as openssl dgst -hmac computes it).
    expect(signature(secret, '{"test": 2432232314}')).toBe('sha256=80ec8a89ce3cd22133a1066caecb4d04fea7467657c8514d717ec42c38a5c94c');
  });

  it('verify at a receiver with the documented check, and a replay six minutes later does not', async () => {
    const clock = new ManualClock('2026-11-21T10:00:00.000Z');
    const world = await hookWorld('sqlite', { clock });
    const receiver = await startReceiver();
    const hook = await world.endpoint(receiver.url);
    const verify = await documentedVerifier();
    expect(verify.TOLERANCE_SECONDS).toBe(300);

    const payload = await world.emit('email.delivered');
    const [got] = (await receiver.waitFor(1)) as [Received];
    const event = await world.server.services.db('events').where({ email_id: world.messageId }).first();
    const headers = got.headers as Record<string, string>;
    expect(got.raw.toString()).toBe(payload);
    expect([headers['webhook-id'], headers['webhook-timestamp']]).toStrictEqual([`evt_${event.id}`, String(seconds(clock.now()))]);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);

    const now = seconds(clock.now());
    // Both checks pass on the request as it arrived, within the tolerance either way.
    expect(verify.verifyServiceSignature(hook.secret, got.raw, headers['x-service-signature'])).toBe(true);
    expect(verify.verifyStandardWebhook(hook.secret, got.raw, headers, now)).toBe(true);
    expect(verify.verifyStandardWebhook(hook.secret, got.raw, headers, now + 300)).toBe(true);
    expect(verify.verifyStandardWebhook(hook.secret, got.raw, headers, now - 300)).toBe(true);

    // The captured request replayed six minutes later: the timestamp check refuses it...
    expect(verify.verifyStandardWebhook(hook.secret, got.raw, headers, now + 360)).toBe(false);
    // ...and a fresh timestamp in its place breaks the signature.
    expect(verify.verifyStandardWebhook(hook.secret, got.raw, { ...headers, 'webhook-timestamp': String(now + 360) }, now + 360)).toBe(false);
    // Any change to the id or the body, another endpoint's secret, a missing header: refused.
    expect(verify.verifyStandardWebhook(hook.secret, got.raw, { ...headers, 'webhook-id': `evt_${event.id + 1}` }, now)).toBe(false);
    expect(verify.verifyStandardWebhook(hook.secret, Buffer.from(payload.replace('delivered', 'bounced')), headers, now)).toBe(false);
    expect(verify.verifyStandardWebhook(newSecret(), got.raw, headers, now)).toBe(false);
    expect(verify.verifyServiceSignature(newSecret(), got.raw, headers['x-service-signature'])).toBe(false);
    expect(verify.verifyStandardWebhook(hook.secret, got.raw, { ...headers, 'webhook-signature': undefined }, now)).toBe(false);

    // A later attempt (here a replay, an hour on) is stamped with its own time and signed again;
    // the id stays the event's, so the receiver can tell it has seen it.
    await until(async () => (await world.log(hook.id)).length === 1, 'the first attempt recorded');
    clock.advance(3_600_000);
    expect(await world.server.services.webhooks.replay(world.workspaceId, hook.id, '2026-11-21T09:00:00.000Z')).toBe(1);
    const again = (await receiver.waitFor(2))[1]!;
    const later = again.headers as Record<string, string>;
    expect([later['webhook-id'], later['webhook-timestamp']]).toStrictEqual([`evt_${event.id}`, String(seconds(clock.now()))]);
    expect(verify.verifyStandardWebhook(hook.secret, again.raw, later, seconds(clock.now()))).toBe(true);
    expect(verify.verifyServiceSignature(hook.secret, again.raw, later['x-service-signature'])).toBe(true);
    expect(verify.verifyStandardWebhook(hook.secret, got.raw, headers, seconds(clock.now()))).toBe(false);
  });
});
