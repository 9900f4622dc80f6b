import { generateKeyPair } from 'node:crypto';

export interface DkimKeyPair {
  /** PKCS#8 PEM, what the signer takes. */
  privateKeyPem: string;
  /** Base64 SubjectPublicKeyInfo DER: the `p=` value of the `v=DKIM1; k=rsa; p=...` TXT record. */
  publicKeyBase64: string;
}

/**
 * RSA 2048: the size RFC 8301 §3.2 recommends and every major receiver accepts. The public key
 * is ~392 base64 characters, so its TXT record spans two 255-octet strings.
 */
export function generateDkimKey(): Promise<DkimKeyPair> {
  return new Promise((resolve, reject) => {
    generateKeyPair(
      'rsa',
      {
        modulusLength: 2048,
        publicKeyEncoding: { type: 'spki', format: 'der' },
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      },
      (err, publicKey, privateKey) => {
        if (err) return reject(err);
        resolve({ privateKeyPem: privateKey, publicKeyBase64: publicKey.toString('base64') });
      },
    );
  });
}

/** The TXT record value to publish at `<selector>._domainkey.<domain>`. */
export function dkimTxtRecord(publicKeyBase64: string): string {
  return `v=DKIM1; k=rsa; p=${publicKeyBase64}`;
}
