import { createHmac, timingSafeEqual } from 'node:crypto';
import { base32Decode, base32Encode, base32Length } from './base32.ts';

/**
 * Signing keys by key id. Tokens carry the id of the key that signed them, so a new key can
 * become `current` while tokens already out in the world (VERP addresses in queued bounces,
 * links in old mail) keep verifying as long as their key stays in `keys`.
 */
export interface TokenKeyring {
  current: string;
  keys: Record<string, Buffer | string>;
}

export interface TokenCodecOptions {
  /**
   * Mixed into the MAC but not carried in the token, so a token minted for one use (a VERP
   * address, which every receiving server sees) is worthless for another (an unsubscribe).
   */
  purpose?: string;
}

export interface TokenCodec {
  sign(payload: Uint8Array): string;
  /** The payload of a token this keyring signed for this purpose, else null; never throws. */
  verify(token: string): Buffer | null;
  /** Convenience for integer ids (recipient rows): minimal big-endian bytes. */
  signId(id: number | bigint): string;
  verifyId(token: string): bigint | null;
}

/** 80 bits: forging needs ~2^79 online guesses against our inbound listener or tracking routes. */
export const MAC_BYTES = 10;
/** Kept short because the key id is inside every token and local parts stop at 64 octets. */
export const MAX_KID_BYTES = 16;
/** Bounds the work a hostile token can cause; a tracked URL of ~3 KB still fits. */
export const MAX_TOKEN_CHARS = 8192;

/** Characters of a token over `payloadBytes` bytes signed under a key id of `kidBytes` bytes. */
export function tokenLength(payloadBytes: number, kidBytes: number): number {
  return base32Length(1 + kidBytes + payloadBytes + MAC_BYTES);
}

export function encodeUint(id: number | bigint): Buffer {
  const value = BigInt(id);
  if (value < 0n || (typeof id === 'number' && !Number.isSafeInteger(id))) {
    throw new RangeError(`token id must be a non-negative safe integer, got ${id}`);
  }
  const hex = value.toString(16);
  return Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex');
}

export function decodeUint(bytes: Uint8Array): bigint | null {
  if (bytes.length === 0 || bytes.length > 8) return null;
  if (bytes.length > 1 && bytes[0] === 0) return null;
  return BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
}

function keyBytes(secret: Buffer | string): Buffer {
  return typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
}

/**
 * Layout before base32: kid length (1 byte) | kid (UTF-8) | payload | HMAC-SHA256 truncated
 * to {@link MAC_BYTES}, the MAC taken over purpose, kid and payload.
 */
export function createTokenCodec(keyring: TokenKeyring, options: TokenCodecOptions = {}): TokenCodec {
  const purpose = Buffer.from(options.purpose ?? 'mailsvc', 'utf8');
  const keys = new Map<string, Buffer>();
  for (const [kid, secret] of Object.entries(keyring.keys)) {
    const kidLength = Buffer.byteLength(kid, 'utf8');
    if (kidLength === 0 || kidLength > MAX_KID_BYTES) {
      throw new RangeError(`token key id "${kid}" must be 1 to ${MAX_KID_BYTES} bytes`);
    }
    const key = keyBytes(secret);
    if (key.length < 16) throw new RangeError(`token key "${kid}" must be at least 16 bytes`);
    keys.set(kid, key);
  }
  if (!keys.has(keyring.current)) {
    throw new RangeError(`current token key id "${keyring.current}" is not in the keyring`);
  }

  const purposePrefix = Buffer.concat([Buffer.from([purpose.length >> 8, purpose.length & 0xff]), purpose]);
  const mac = (key: Buffer, signed: Uint8Array): Buffer => createHmac('sha256', key).update(purposePrefix).update(signed).digest();

  const currentKey = keys.get(keyring.current)!;
  const kid = Buffer.from(keyring.current, 'utf8');
  const sign = (payload: Uint8Array): string => {
    // One buffer: kid length, kid, payload, then the MAC over what precedes it.
    const signedLength = 1 + kid.length + payload.length;
    const token = Buffer.allocUnsafe(signedLength + MAC_BYTES);
    token[0] = kid.length;
    kid.copy(token, 1);
    token.set(payload, 1 + kid.length);
    mac(currentKey, token.subarray(0, signedLength)).copy(token, signedLength, 0, MAC_BYTES);
    return base32Encode(token);
  };

  const verify = (token: string): Buffer | null => {
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_CHARS) return null;
    const bytes = base32Decode(token);
    if (!bytes || bytes.length < 1 + MAC_BYTES + 1) return null;
    const kidLength = bytes[0]!;
    if (kidLength === 0 || kidLength > MAX_KID_BYTES || bytes.length < 1 + kidLength + MAC_BYTES) return null;
    const key = keys.get(bytes.subarray(1, 1 + kidLength).toString('utf8'));
    if (!key) return null;
    const signed = bytes.subarray(0, bytes.length - MAC_BYTES);
    const given = bytes.subarray(bytes.length - MAC_BYTES);
    if (!timingSafeEqual(mac(key, signed).subarray(0, MAC_BYTES), given)) return null;
    return Buffer.from(signed.subarray(1 + kidLength));
  };

  return {
    sign,
    verify,
    signId: (id) => sign(encodeUint(id)),
    verifyId: (token) => {
      const payload = verify(token);
      return payload ? decodeUint(payload) : null;
    },
  };
}
