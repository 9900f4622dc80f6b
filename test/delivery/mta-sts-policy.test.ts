import { describe, expect, it } from 'vitest';
import { MAX_POLICY_BYTES, mxMatches, parseStsPolicy, parseStsRecord } from '../../src/delivery/mta-sts-policy.ts';

describe('the _mta-sts TXT record (RFC 8461 §3.1)', () => {
  it('gives the id of the one v=STSv1 record, its strings joined, other TXT records ignored', () => {
    expect(parseStsRecord([['v=spf1 -all'], ['v=STSv1; id=2026', '1126T1;']])).toStrictEqual({ id: '20261126T1' });
    expect(parseStsRecord([['v=STSv1;id=abc;ext=1']])).toStrictEqual({ id: 'abc' });
  });

  it('finds no policy without a record, with two, without an id or with an id that is not 1 to 32 letters and digits', () => {
    expect(parseStsRecord([['v=spf1 -all']])).toStrictEqual({ none: 'no v=STSv1 TXT record' });
    expect(parseStsRecord([['v=STSv1; id=a'], ['v=STSv1; id=b']])).toStrictEqual({ none: '2 v=STSv1 TXT records (RFC 8461 §3.1 allows one)' });
    expect(parseStsRecord([['v=STSv1;']])).toStrictEqual({ none: 'the TXT record has no id' });
    expect(parseStsRecord([['v=STSv1; id=not-valid']])).toMatchObject({ none: expect.stringContaining('is not 1 to 32 letters and digits') });
    expect(parseStsRecord([[`v=STSv1; id=${'a'.repeat(33)}`]])).toMatchObject({ none: expect.stringContaining('is not 1 to 32') });
    expect(parseStsRecord([['v=STSv10; id=a']])).toStrictEqual({ none: 'no v=STSv1 TXT record' });
  });
});

describe('the policy file (RFC 8461 §3.2)', () => {
  it("reads the RFC's example with CRLF or LF line ends, unknown keys ignored, max_age capped at a year", () => {
    const text = 'version: STSv1\r\nmode: enforce\r\nmx: mail.example.com\r\nmx: *.example.net\r\nmx: backupmx.example.com\r\nmax_age: 604800\r\n';
    expect(parseStsPolicy(text)).toStrictEqual({ mode: 'enforce', mx: ['mail.example.com', '*.example.net', 'backupmx.example.com'], maxAge: 604800 });
    expect(parseStsPolicy('version: STSv1\nmode: testing\nmx: MX.Example.com.\nextension: 1\nmax_age: 9999999999\n')).toStrictEqual({
      mode: 'testing',
      mx: ['mx.example.com'],
      maxAge: 31_557_600,
    });
    expect(parseStsPolicy('version: STSv1\nmode: none\nmax_age: 86400')).toStrictEqual({ mode: 'none', mx: [], maxAge: 86400 });
  });

  it('refuses a policy without the version, with another mode, a bad max_age, no mx, a bad mx or over 64 KB, saying which', () => {
    expect(parseStsPolicy('mode: enforce\nmx: a.b\nmax_age: 1')).toStrictEqual({ invalid: 'the policy has no "version: STSv1" line' });
    expect(parseStsPolicy('version: STSv1\nmode: strict\nmx: a.b\nmax_age: 1')).toStrictEqual({ invalid: 'the policy\'s mode "strict" is not enforce, testing or none' });
    expect(parseStsPolicy('version: STSv1\nmode: enforce\nmx: a.b\nmax_age: -1')).toStrictEqual({
      invalid: 'the policy\'s max_age "-1" is not a whole number of seconds',
    });
    expect(parseStsPolicy('version: STSv1\nmode: enforce\nmax_age: 1')).toStrictEqual({ invalid: 'the policy in mode enforce names no mx' });
    expect(parseStsPolicy('version: STSv1\nmode: enforce\nmx: mx.*.example.com\nmax_age: 1')).toMatchObject({
      invalid: expect.stringContaining('is not a host name or *.pattern'),
    });
    expect(parseStsPolicy(`version: STSv1\nmode: enforce\nmx: a.b\nmax_age: 1\n${'#'.repeat(MAX_POLICY_BYTES)}`)).toStrictEqual({
      invalid: 'the policy is larger than 65536 bytes',
    });
  });

  it('reads a 64 KB policy of many lines in one pass', () => {
    const text = `version: STSv1\nmode: enforce\nmax_age: 1\n${'mx: a.example.com\n'.repeat(3600)}`;
    const started = performance.now();
    expect(parseStsPolicy(text)).toMatchObject({ mode: 'enforce' });
    expect(performance.now() - started).toBeLessThan(200);
  });
});

describe('MX patterns (RFC 8461 §4.1)', () => {
  it('match exactly, or with *. one leftmost label, case and trailing dot aside', () => {
    expect(mxMatches('mail.example.com', ['mail.example.com'])).toBe(true);
    expect(mxMatches('MX1.Example.NET.', ['*.example.net'])).toBe(true);
    expect(mxMatches('a.mx1.example.net', ['*.example.net'])).toBe(false);
    expect(mxMatches('example.net', ['*.example.net'])).toBe(false);
    expect(mxMatches('evil.test', ['mail.example.com', '*.example.net'])).toBe(false);
  });
});
