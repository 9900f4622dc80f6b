export { base32Decode, base32Encode } from './base32.ts';
export {
  createTokenCodec,
  decodeUint,
  encodeUint,
  MAC_BYTES,
  MAX_KID_BYTES,
  tokenLength,
  type TokenCodec,
  type TokenCodecOptions,
  type TokenKeyring,
} from './codec.ts';
