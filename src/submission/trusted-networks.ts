import { addressMatcher } from '../listeners/guard.ts';

/** `submission.trustedNetworks`: clients in `network` may submit without AUTH, as API key `keyId`. */
export interface TrustedNetwork {
  network: string;
  keyId: number;
}

/** Addresses whose answer is remembered; past it the memory starts again. */
const REMEMBERED = 10_000;

/**
 * The API key a client's address submits as without AUTH: the first network that holds it, else
 * null. Asked at every MAIL FROM, so the answer for each address is remembered (a match makes a
 * SocketAddress).
 */
export function trustedKeyFinder(networks: readonly TrustedNetwork[]): (ip: string) => number | null {
  const entries = networks.map(({ network, keyId }, i) => ({ holds: addressMatcher([network], `submission.trustedNetworks[${i}].network`), keyId }));
  const seen = new Map<string, number | null>();
  return (ip) => {
    const known = seen.get(ip);
    if (known !== undefined) return known;
    let keyId: number | null = null;
    for (const entry of entries) {
      if (entry.holds(ip)) {
        keyId = entry.keyId;
        break;
      }
    }
    if (seen.size >= REMEMBERED) seen.clear();
    seen.set(ip, keyId);
    return keyId;
  };
}
