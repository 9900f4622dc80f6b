import { decodeUint, encodeUint, MAX_TOKEN_CHARS, tokenLength, type TokenCodec } from '../tokens/index.ts';

/** The codecs tracking signs with, one purpose each so no token works on another route. */
export interface TrackingCodecs {
  open: TokenCodec;
  click: TokenCodec;
  unsubscribe: TokenCodec;
}

/** The longest key id a keyring accepts; a URL whose token could exceed the limit stays untracked. */
const WORST_KID_BYTES = 16;

/**
 * Signs the click tokens of one recipient's links, the id encoded once for all of them. A click
 * token's payload: the recipient id's length (1 byte), the id, then the original URL in UTF-8.
 * The URL travels signed inside the token, so a redirect needs no lookup, works after the
 * message is pruned, and can only go where a message we sent pointed.
 */
export function clickSigner(codec: TokenCodec, recipientId: number): (url: string) => string | null {
  const id = encodeUint(recipientId);
  return (url) => {
    const urlBytes = Buffer.byteLength(url, 'utf8');
    const payload = Buffer.allocUnsafe(1 + id.length + urlBytes);
    payload[0] = id.length;
    id.copy(payload, 1);
    payload.write(url, 1 + id.length, 'utf8');
    if (tokenLength(payload.length, WORST_KID_BYTES) > MAX_TOKEN_CHARS) return null;
    return codec.sign(payload);
  };
}

export function verifyClick(codec: TokenCodec, token: string): { recipientId: number; url: string } | null {
  const payload = codec.verify(token);
  if (!payload || payload.length < 2) return null;
  const idLength = payload[0]!;
  if (payload.length < 1 + idLength) return null;
  const id = decodeUint(payload.subarray(1, 1 + idLength));
  const url = payload.subarray(1 + idLength).toString('utf8');
  if (id === null || id > BigInt(Number.MAX_SAFE_INTEGER) || url.length === 0) return null;
  return { recipientId: Number(id), url };
}

export function verifyRecipient(codec: TokenCodec, token: string): number | null {
  const id = codec.verifyId(token);
  return id === null || id > BigInt(Number.MAX_SAFE_INTEGER) ? null : Number(id);
}
