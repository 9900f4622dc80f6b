import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';

const generate = promisify(generateKeyPair);

export interface DkimKey {
  privateKeyPem: string;
  /** Base64 SubjectPublicKeyInfo, the `p=` tag of the DNS record (RFC 6376 §3.6.1). */
  publicKeyBase64: string;
}

/** RSA 2048: the size every major receiver accepts and the DNS TXT record still fits. */
export async function generateDkimKey(): Promise<DkimKey> {
  const { privateKey, publicKey } = await generate('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKeyBase64: publicKey.toString('base64') };
}
