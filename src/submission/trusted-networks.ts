import { addressMatcher } from '../listeners/guard.ts';

/** `submission.trustedNetworks`: clients in `network` may submit without AUTH, as API key `keyId`. */
export interface TrustedNetwork {
  network: string;
  keyId: number;
}

/** The API key a client's address submits as without AUTH: the first network that holds it, else null. */
export function trustedKeyFinder(networks: readonly TrustedNetwork[]): (ip: string) => number | null {
  const entries = networks.map(({ network, keyId }, i) => ({ holds: addressMatcher([network], `submission.trustedNetworks[${i}].network`), keyId }));
  return (ip) => {
    for (const entry of entries) if (entry.holds(ip)) return entry.keyId;
    return null;
  };
}
