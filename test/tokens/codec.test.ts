import { describe, expect, it } from 'vitest';
import { base32Decode, base32Encode } from '../../src/tokens/base32.ts';
import { createTokenCodec, MAX_KID_BYTES, tokenLength, type TokenKeyring } from '../../src/tokens/codec.ts';

const SECRET_A = Buffer.alloc(32, 1);
const SECRET_B = 'a second secret of sufficient length';
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

describe('base32 (RFC 4648 §10 vectors, lowercased, unpadded)', () => {
  const vectors: [string, string][] = [
    ['', ''],
    ['f', 'my'],
    ['fo', 'mzxq'],
    ['foo', 'mzxw6'],
    ['foob', 'mzxw6yq'],
    ['fooba', 'mzxw6ytb'],
    ['foobar', 'mzxw6ytboi'],
  ];
  it.each(vectors)('%j ↔ %s', (plain, encoded) => {
    expect(base32Encode(Buffer.from(plain))).toBe(encoded);
    expect(base32Decode(encoded)?.toString()).toBe(plain);
    expect(base32Decode(encoded.toUpperCase())?.toString()).toBe(plain);
  });

  it('rejects foreign characters, impossible lengths and non-zero padding bits', () => {
    expect(base32Decode('mzxw0')).toBeNull();
    expect(base32Decode('mzx=')).toBeNull();
    expect(base32Decode('m')).toBeNull();
    expect(base32Decode('mz')).toBeNull(); // "my" is the only spelling of "f"
  });

  it('round-trips random bytes of every length up to 64', () => {
    for (let n = 0; n <= 64; n++) {
      const bytes = Buffer.from(Array.from({ length: n }, (_, i) => (i * 37 + n) & 0xff));
      expect(base32Decode(base32Encode(bytes))).toEqual(bytes);
    }
  });
});

describe('createTokenCodec', () => {
  const keyring: TokenKeyring = { current: 'k1', keys: { k1: SECRET_A } };

  it('round-trips bytes and ids, and tokens are lowercase base32', () => {
    const codec = createTokenCodec(keyring);
    const token = codec.sign(Buffer.from('hello'));
    expect(token).toMatch(/^[a-z2-7]+$/);
    expect(codec.verify(token)?.toString()).toBe('hello');
    for (const id of [0, 1, 255, 256, 123_456_789, Number.MAX_SAFE_INTEGER]) {
      expect(codec.verifyId(codec.signId(id))).toBe(BigInt(id));
    }
    expect(codec.verifyId(codec.signId(2n ** 64n - 1n))).toBe(2n ** 64n - 1n);
  });

  it('accepts a token whose case an MTA folded', () => {
    const codec = createTokenCodec(keyring);
    expect(codec.verifyId(codec.signId(42).toUpperCase())).toBe(42n);
  });

  it('verifies tokens of an older key after rotation, and not after the key is dropped', () => {
    const old = createTokenCodec(keyring);
    const token = old.signId(7);
    const rotated = createTokenCodec({ current: 'k2', keys: { k1: SECRET_A, k2: SECRET_B } });
    expect(rotated.verifyId(token)).toBe(7n);
    const fresh = rotated.signId(8);
    expect(fresh).not.toBe(old.signId(8));
    expect(rotated.verifyId(fresh)).toBe(8n);
    expect(old.verifyId(fresh)).toBeNull();
    const retired = createTokenCodec({ current: 'k2', keys: { k2: SECRET_B } });
    expect(retired.verifyId(token)).toBeNull();
  });

  it('rejects a token signed with another secret under the same key id', () => {
    const other = createTokenCodec({ current: 'k1', keys: { k1: Buffer.alloc(32, 2) } });
    expect(createTokenCodec(keyring).verify(other.signId(5))).toBeNull();
  });

  it('keeps purposes apart: a VERP token is not an unsubscribe token', () => {
    const verp = createTokenCodec(keyring, { purpose: 'verp' });
    const unsubscribe = createTokenCodec(keyring, { purpose: 'unsubscribe' });
    expect(unsubscribe.verifyId(verp.signId(9))).toBeNull();
    expect(verp.verifyId(verp.signId(9))).toBe(9n);
  });

  it('rejects every single-character change, every truncation and every extension', () => {
    const codec = createTokenCodec(keyring);
    const token = codec.signId(987_654_321);
    for (let i = 0; i < token.length; i++) {
      for (const replacement of ALPHABET) {
        if (replacement === token[i]) continue;
        const altered = token.slice(0, i) + replacement + token.slice(i + 1);
        expect(codec.verify(altered), `position ${i} → ${replacement}`).toBeNull();
      }
    }
    for (let n = 0; n < token.length; n++) expect(codec.verify(token.slice(0, n))).toBeNull();
    for (const extra of ['a', 'aa', 'aaaaaaaa', '2']) expect(codec.verify(token + extra)).toBeNull();
  });

  it('returns null for junk and never throws', () => {
    const codec = createTokenCodec(keyring);
    const junk: unknown[] = ['', '!!!!', 'a'.repeat(100_000), 'é', null, undefined, 42, {}];
    for (const value of junk) expect(codec.verify(value as string)).toBeNull();
    expect(codec.verifyId(codec.sign(Buffer.alloc(0)))).toBeNull();
    expect(codec.verifyId(codec.sign(Buffer.alloc(9, 1)))).toBeNull();
  });

  it('keeps a VERP local part b+<token> within 64 octets for any 64-bit id and the longest key id', () => {
    const kid = 'k'.repeat(MAX_KID_BYTES);
    const codec = createTokenCodec({ current: kid, keys: { [kid]: SECRET_A } });
    const token = codec.signId(2n ** 64n - 1n);
    expect(token.length).toBe(tokenLength(8, MAX_KID_BYTES));
    expect(`b+${token}`.length).toBeLessThanOrEqual(64);
    const typical = createTokenCodec(keyring).signId(123_456_789);
    expect(`b+${typical}`.length).toBe(2 + tokenLength(4, 2));
    expect(`b+${typical}`.length).toBeLessThanOrEqual(40);
  });

  it('carries long payloads such as a tracked URL', () => {
    const codec = createTokenCodec(keyring, { purpose: 'click' });
    const url = `https://example.com/path?q=${'x'.repeat(2000)}`;
    expect(codec.verify(codec.sign(Buffer.from(url)))?.toString()).toBe(url);
  });

  it('refuses a keyring without its current key, an oversized key id or a short secret', () => {
    expect(() => createTokenCodec({ current: 'k9', keys: { k1: SECRET_A } })).toThrow(/not in the keyring/);
    expect(() => createTokenCodec({ current: 'x'.repeat(17), keys: { ['x'.repeat(17)]: SECRET_A } })).toThrow(/key id/);
    expect(() => createTokenCodec({ current: 'k1', keys: { k1: 'short' } })).toThrow(/at least 16 bytes/);
  });
});
