export { base32Decode, base32Encode } from './base32.ts';
export {
  createTokenCodec,
  decodeUint,
  encodeUint,
  MAX_KID_BYTES,
  MAX_TOKEN_CHARS,
  tokenLength,
  type TokenCodec,
  type TokenKeyring,
} from './codec.ts';
