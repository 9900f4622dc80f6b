import { describe, expect, it } from 'vitest';
import { verpRecipientId, verpSender } from '../../src/delivery/verp.ts';
import { createTokenCodec } from '../../src/tokens/index.ts';

const codec = createTokenCodec({ current: 'v1', keys: { v1: Buffer.alloc(32, 7) } }, { purpose: 'verp' });

describe('VERP addresses', () => {
  it('round-trips a recipient id through the envelope sender, whatever case it comes back in', () => {
    const sender = verpSender(codec, 1_234_567, 'bounces.example.test');
    expect(sender).toMatch(/^b\+[a-z2-7]+@bounces\.example\.test$/);
    expect(sender.split('@')[0]!.length).toBeLessThanOrEqual(64);
    expect(verpRecipientId(codec, sender)).toBe(1_234_567n);
    expect(verpRecipientId(codec, sender.toUpperCase())).toBe(1_234_567n);
  });

  it('stays within 64 octets for the largest ids', () => {
    expect(verpSender(codec, Number.MAX_SAFE_INTEGER, 'b.test').split('@')[0]!.length).toBeLessThanOrEqual(64);
  });

  it('returns null for other addresses and forged tokens', () => {
    const sender = verpSender(codec, 42, 'bounces.example.test');
    expect(verpRecipientId(codec, 'postmaster@bounces.example.test')).toBeNull();
    expect(verpRecipientId(codec, sender.replace('b+', 'u+'))).toBeNull();
    expect(verpRecipientId(codec, sender.replace(/@.*/, 'a@bounces.example.test'))).toBeNull();
    expect(verpRecipientId(codec, 'no-at-sign')).toBeNull();
    const other = createTokenCodec({ current: 'v1', keys: { v1: Buffer.alloc(32, 7) } }, { purpose: 'unsubscribe' });
    expect(verpRecipientId(codec, `b+${other.signId(42)}@bounces.example.test`)).toBeNull();
  });
});
