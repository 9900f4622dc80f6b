/**
 * RFC 4648 §6 base32, lowercased and without padding. Tokens travel in the local part of
 * envelope addresses, which many MTAs fold to one case (RFC 5321 §2.4 lets them), so the
 * alphabet must not depend on case the way base64 does.
 */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

const LOOKUP = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) {
  LOOKUP[ALPHABET.charCodeAt(i)] = i;
  LOOKUP[ALPHABET.toUpperCase().charCodeAt(i)] = i;
}

const ALPHABET_CODES = Buffer.from(ALPHABET, 'latin1');

export function base32Encode(bytes: Uint8Array): string {
  const out = Buffer.allocUnsafe(base32Length(bytes.length));
  let at = 0;
  let buffer = 0;
  let bits = 0;
  for (let i = 0; i < bytes.length; i++) {
    buffer = (buffer << 8) | bytes[i]!;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out[at++] = ALPHABET_CODES[(buffer >>> bits) & 31]!;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out[at++] = ALPHABET_CODES[(buffer << (5 - bits)) & 31]!;
  return out.toString('latin1', 0, at);
}

/** Characters needed for `n` bytes. */
export function base32Length(n: number): number {
  return Math.ceil((n * 8) / 5);
}

/**
 * Decodes either case. Returns null for a character outside the alphabet, an impossible
 * length, or non-zero padding bits, so each byte string has exactly one accepted spelling
 * (otherwise a changed last character could still decode to the same bytes).
 */
export function base32Decode(text: string): Buffer | null {
  const remainder = text.length % 8;
  if (remainder === 1 || remainder === 3 || remainder === 6) return null;
  const out = Buffer.alloc(Math.floor((text.length * 5) / 8));
  let buffer = 0;
  let bits = 0;
  let index = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const value = code < 128 ? LOOKUP[code]! : -1;
    if (value < 0) return null;
    buffer = ((buffer << 5) | value) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[index++] = (buffer >>> bits) & 0xff;
    }
  }
  if ((buffer & ((1 << bits) - 1)) !== 0) return null;
  return out;
}
