import { generateKeyPair } from 'node:crypto';

/** The DKIM signing algorithms a key may have (RFC 6376 §3.3, RFC 8463 §3). */
export type DkimAlgorithm = 'rsa-sha256' | 'ed25519-sha256';

export interface DkimKeyPair {
  /** PKCS#8 PEM, what the signer takes. */
  privateKeyPem: string;
  /**
   * The `p=` value of the TXT record: for RSA the base64 SubjectPublicKeyInfo DER, for Ed25519
   * the base64 of the raw 32-byte public key (RFC 8463 §4.2), not its SPKI.
   */
  publicKeyBase64: string;
}

/** An Ed25519 SubjectPublicKeyInfo DER is a fixed 12-octet prefix and the raw 32-octet key. */
const ED25519_SPKI_PREFIX_LENGTH = 12;

/**
 * RSA 2048: the size RFC 8301 §3.2 recommends and every major receiver accepts. The public key
 * is ~392 base64 characters, so its TXT record spans two 255-octet strings. Ed25519 (RFC 8463):
 * a 44-character key, signatures a fraction of RSA's cost; receivers that do not know it ignore
 * its signature, hence signing with both (dual signing).
 */
export function generateDkimKey(algorithm: DkimAlgorithm = 'rsa-sha256'): Promise<DkimKeyPair> {
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, publicKey: Buffer, privateKey: string) => {
      if (err) return reject(err);
      const raw = algorithm === 'ed25519-sha256' ? publicKey.subarray(ED25519_SPKI_PREFIX_LENGTH) : publicKey;
      resolve({ privateKeyPem: privateKey, publicKeyBase64: raw.toString('base64') });
    };
    const encoding = { publicKeyEncoding: { type: 'spki', format: 'der' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } } as const;
    if (algorithm === 'ed25519-sha256') generateKeyPair('ed25519', encoding, done);
    else generateKeyPair('rsa', { modulusLength: 2048, ...encoding }, done);
  });
}

/** The TXT record value to publish at `<selector>._domainkey.<domain>`. */
export function dkimTxtRecord(publicKeyBase64: string, algorithm: DkimAlgorithm = 'rsa-sha256'): string {
  return `v=DKIM1; k=${algorithm === 'ed25519-sha256' ? 'ed25519' : 'rsa'}; p=${publicKeyBase64}`;
}
