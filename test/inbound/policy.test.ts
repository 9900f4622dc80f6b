import { describe, expect, it } from 'vitest';
import { checkRecipient, splitAddress, type RecipientPolicy } from '../../src/inbound/policy.ts';
import { createTokenCodec } from '../../src/tokens/index.ts';

const keyring = { current: 'k1', keys: { k1: 'a-test-key-of-enough-length' } };
const verp = createTokenCodec(keyring, { purpose: 'verp' });
const unsubscribe = createTokenCodec(keyring, { purpose: 'unsubscribe' });
const policy: RecipientPolicy = { returnPathDomains: new Set(['bounces.mailsvc.test', 'bounces.acme.test']), verp, unsubscribe, maxRecipients: 3 };
const rcpt = (address: string, accepted = 0) => checkRecipient({ accepted }, address, policy);

describe('checkRecipient', () => {
  it('takes b+, u+, fbl@ and postmaster@ at a return-path domain, case-insensitively', () => {
    expect(rcpt(`b+${verp.signId(42)}@bounces.mailsvc.test`)).toEqual({
      ok: true,
      value: { kind: 'verp', address: `b+${verp.signId(42)}@bounces.mailsvc.test`, recipientId: 42 },
    });
    expect(rcpt(`B+${verp.signId(42).toUpperCase()}@BOUNCES.ACME.TEST`)).toMatchObject({ ok: true, value: { kind: 'verp', recipientId: 42 } });
    expect(rcpt(`u+${unsubscribe.signId(7)}@bounces.acme.test`)).toMatchObject({ ok: true, value: { kind: 'unsubscribe', recipientId: 7 } });
    expect(rcpt('FBL@bounces.mailsvc.test.')).toEqual({ ok: true, value: { kind: 'fbl', address: 'fbl@bounces.mailsvc.test' } });
    expect(rcpt('Postmaster@bounces.acme.test')).toMatchObject({ ok: true, value: { kind: 'postmaster' } });
  });

  it('refuses tokens of the wrong purpose or altered, other local parts and other domains with 550 5.7.1', () => {
    for (const address of [
      `b+${unsubscribe.signId(42)}@bounces.mailsvc.test`,
      `u+${verp.signId(42)}@bounces.mailsvc.test`,
      `b+${verp.signId(42)}x@bounces.mailsvc.test`,
      'abuse@bounces.mailsvc.test',
      `b+${verp.signId(42)}@mail.mailsvc.test`,
      'fbl@bounces.other.test',
    ]) {
      const d = rcpt(address);
      expect(d.ok).toBe(false);
      if (!d.ok) expect([d.reply.code, d.reply.status]).toEqual([550, '5.7.1']);
    }
  });

  it('treats routing tricks as refusals before looking at the domain', () => {
    for (const address of [
      'a%b@bounces.mailsvc.test',
      'b!a@bounces.mailsvc.test',
      '"fbl"@bounces.mailsvc.test',
      '@x:fbl@bounces.mailsvc.test',
      'a b@bounces.mailsvc.test',
    ]) {
      expect(rcpt(address)).toMatchObject({ ok: false, reason: 'routingRefused' });
    }
    expect(splitAddress('fbl@[127.0.0.1]')).toBeNull();
    expect(splitAddress('postmaster')).toBeNull();
  });

  it('limits recipients per transaction with 452 4.5.3', () => {
    expect(rcpt('fbl@bounces.mailsvc.test', 3)).toMatchObject({ ok: false, reply: { code: 452, status: '4.5.3' } });
  });
});

describe('checkRecipient for receiving domains (SPEC §14)', () => {
  const m = (prefix: string, suffix: string | null) => ({ prefix, suffix, domain: 'acme.test' });
  const receiving = {
    domains: new Map([
      [
        'acme.test',
        {
          workspaceId: 9,
          routes: [
            { id: 1, match: m('', ''), priority: 0, workspaceId: 9 },
            { id: 2, match: m('support', null), priority: 0, workspaceId: 9 },
          ],
        },
      ],
      ['quiet.test', { workspaceId: 9, routes: [] }],
    ]),
  };
  const withRoutes: RecipientPolicy = { ...policy, receiving, maxRouteRecipients: 5 };
  const to = (address: string, accepted = 0) => checkRecipient({ accepted }, address, withRoutes);

  it('takes a recipient a route matches, naming the most specific route and its workspace', () => {
    expect(to('Support@ACME.test')).toEqual({ ok: true, value: { kind: 'route', address: 'support@acme.test', routeId: 2, workspaceId: 9 } });
    expect(to('anyone@acme.test')).toMatchObject({ ok: true, value: { routeId: 1 } });
  });

  it('refuses a receiving domain’s recipient no route matches with 550 5.1.1, and still refuses relaying and routing tricks', () => {
    const none = to('anyone@quiet.test');
    expect(none.ok ? null : [none.reply.code, none.reply.status, none.reason]).toEqual([550, '5.1.1', 'noRoute']);
    const relay = to('a@elsewhere.example');
    expect(relay.ok ? null : relay.reason).toBe('relayDenied');
    const trick = to('a%elsewhere.example@acme.test');
    expect(trick.ok ? null : trick.reason).toBe('routingRefused');
    expect(to('postmaster@bounces.mailsvc.test')).toMatchObject({ ok: true, value: { kind: 'postmaster' } });
  });

  it('allows routes their own recipient cap and reports theirs', () => {
    expect(to('a@acme.test', 4)).toMatchObject({ ok: true });
    const over = to('a@acme.test', 5);
    expect(over.ok ? null : over.reason).toBe('tooManyRecipients');
    const report = to('postmaster@bounces.mailsvc.test', 3);
    expect(report.ok ? null : report.reason).toBe('tooManyRecipients');
  });
});
