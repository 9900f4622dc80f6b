import type { TokenCodec } from '../tokens/index.ts';

/** RFC 5321 §4.5.3.1.1: a local part is at most 64 octets. */
export const MAX_LOCAL_PART = 64;

/**
 * The envelope sender for one recipient row: `b+<token>@<return-path domain>`. Bounces come back
 * to it, and the signed token names the recipient without trusting anything else in the report.
 * The codec should be created with its own purpose (e.g. `verp`), since every receiving server
 * sees this address.
 */
export function verpSender(codec: TokenCodec, recipientId: number | bigint, returnPathDomain: string): string {
  const localPart = `b+${codec.signId(recipientId)}`;
  if (localPart.length > MAX_LOCAL_PART) {
    throw new RangeError(`VERP local part is ${localPart.length} octets, over ${MAX_LOCAL_PART}`);
  }
  return `${localPart}@${returnPathDomain}`;
}

/**
 * The recipient row id from an address we handed out, or null for anything else. Local parts
 * are compared without regard to case because some MTAs fold them.
 */
export function verpRecipientId(codec: TokenCodec, address: string): bigint | null {
  const at = address.lastIndexOf('@');
  if (at <= 0) return null;
  const localPart = address.slice(0, at).toLowerCase();
  if (!localPart.startsWith('b+')) return null;
  return codec.verifyId(localPart.slice(2));
}
