export { base32Decode, base32Encode } from './base32.ts';
export {
  createTokenCodec,
  decodeUint,
  encodeUint,
  MAC_BYTES,
  MAX_KID_BYTES,
  MAX_TOKEN_CHARS,
  tokenLength,
  type TokenCodec,
  type TokenCodecOptions,
  type TokenKeyring,
} from './codec.ts';
