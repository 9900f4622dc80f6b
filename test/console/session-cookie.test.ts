import { describe, expect, it } from 'vitest';
import { ConsoleSessions, SESSION_SECONDS } from '../../src/console/session.ts';
import { ManualClock } from '../helpers/clock.ts';

const keyring = (current: string, keys: Record<string, string>) => ({ current, keys: Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, Buffer.from(v)])) });

describe('console session cookies', () => {
  it('last SESSION_SECONDS, then are refused', () => {
    const clock = new ManualClock();
    const sessions = new ConsoleSessions({ keyring: keyring('a', { a: 'secret-a' }), clock });
    const { cookie } = sessions.issue(42);
    expect(sessions.verify(cookie)).toEqual({ keyId: 42, expiresAt: Math.floor(clock.now() / 1000) + SESSION_SECONDS });
    clock.advance(SESSION_SECONDS * 1000 - 1000);
    expect(sessions.verify(cookie)?.keyId).toBe(42);
    clock.advance(1000);
    expect(sessions.verify(cookie)).toBeNull();
  });

  it('keep working after a new signing key is added, and stop when theirs is gone', () => {
    const clock = new ManualClock();
    const { cookie } = new ConsoleSessions({ keyring: keyring('a', { a: 'secret-a' }), clock }).issue(7);
    expect(new ConsoleSessions({ keyring: keyring('b', { a: 'secret-a', b: 'secret-b' }), clock }).verify(cookie)?.keyId).toBe(7);
    expect(new ConsoleSessions({ keyring: keyring('b', { b: 'secret-b' }), clock }).verify(cookie)).toBeNull();
    // The same kid with another secret (another installation) does not accept it either.
    expect(new ConsoleSessions({ keyring: keyring('a', { a: 'other' }), clock }).verify(cookie)).toBeNull();
  });

  it('bind each CSRF token to its cookie and refuse any edited part', () => {
    const sessions = new ConsoleSessions({ keyring: keyring('a', { a: 'secret-a' }), clock: new ManualClock() });
    const one = sessions.issue(1).cookie;
    const two = sessions.issue(1).cookie;
    expect(one).not.toBe(two);
    expect(sessions.csrfMatches(one, sessions.csrfToken(one))).toBe(true);
    expect(sessions.csrfMatches(one, sessions.csrfToken(two))).toBe(false);
    expect(sessions.csrfMatches(one, undefined)).toBe(false);
    const parts = one.split('.');
    for (let i = 1; i < parts.length; i++) {
      const edited = [...parts];
      edited[i] = edited[i].slice(0, -1) + (edited[i].endsWith('1') ? '2' : '1');
      expect(sessions.verify(edited.join('.'))).toBeNull();
    }
    for (const junk of ['', 's1', 'x'.repeat(5000), `${one}.extra`, 's1.constructor.1.99999999999.n.sig', 's1.__proto__.1.1.n.x'])
      expect(sessions.verify(junk)).toBeNull();
  });
});
