export { createTokenCodec, decodeUint, encodeUint, MAX_KID_BYTES, MAX_TOKEN_CHARS, tokenLength, type TokenCodec, type TokenKeyring } from './codec.ts';
