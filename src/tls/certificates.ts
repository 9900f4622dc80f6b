import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { ensurePrivateDir, PRIVATE_FILE_MODE, restrictIfPresent } from '../config/dataDir.ts';
import type { Logger } from '../core/ports.ts';

/** PEM strings for a TLS server (STARTTLS on the inbound and submission listeners). */
export interface TlsCredentials {
  key: string;
  cert: string;
  /** Where they came from, for the start-up log. */
  source: 'config' | 'generated' | 'generated-earlier';
}

export interface TlsSettings {
  cert: string | null;
  key: string | null;
}

export const GENERATED_CERT = 'tls-selfsigned.crt';
export const GENERATED_KEY = 'tls-selfsigned.key';

/** One generation per data directory per process, even when two listeners start at once. */
const pending = new Map<string, Promise<TlsCredentials>>();

/**
 * `tls.cert`/`tls.key` from config (file paths, or PEM text given inline), else a self-signed
 * pair generated once into `<dataDir>` and reused on every later start. Sending MTAs do not
 * verify the certificate of an MX (RFC 7435 opportunistic TLS), so a self-signed pair still
 * encrypts every report; the log says when one was generated so an operator can replace it.
 */
export function loadTlsCredentials(tls: TlsSettings, dataDir: string, hostname: string, log: Logger): Promise<TlsCredentials> {
  if (tls.cert && tls.key) {
    try {
      return Promise.resolve({ cert: pemOrFile(tls.cert, 'tls.cert'), key: pemOrFile(tls.key, 'tls.key'), source: 'config' });
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }
  if (tls.cert || tls.key) {
    return Promise.reject(new Error('tls.cert and tls.key must be set together'));
  }
  let p = pending.get(dataDir);
  if (!p) {
    p = generatedPair(dataDir, hostname, log);
    pending.set(dataDir, p);
    p.catch(() => pending.delete(dataDir));
  }
  return p;
}

const ENV_NAME = { 'tls.cert': 'MAILSVC_TLS_CERT', 'tls.key': 'MAILSVC_TLS_KEY' } as const;

/**
 * PEM text as given, or the file it names. A file that cannot be read is named with its key and
 * variable: a bare `ENOENT ... cert.pem` at start does not say which setting to fix.
 */
export function pemOrFile(value: string, key: keyof typeof ENV_NAME): string {
  if (value.includes('-----BEGIN')) return value;
  try {
    return readFileSync(value, 'utf8');
  } catch (cause) {
    const err = cause as NodeJS.ErrnoException;
    const code = err.code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'a directory, not a file' : err.message;
    throw new Error(
      `${key} (${ENV_NAME[key]}): cannot read ${value}: ${why}; point it at a PEM file, or set neither tls.cert nor tls.key to use a self-signed certificate generated in dataDir`,
      { cause },
    );
  }
}

async function generatedPair(dataDir: string, hostname: string, log: Logger): Promise<TlsCredentials> {
  const certFile = join(dataDir, GENERATED_CERT);
  const keyFile = join(dataDir, GENERATED_KEY);
  if (existsSync(certFile) && existsSync(keyFile)) {
    for (const file of [keyFile, certFile]) restrictIfPresent(file);
    return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), source: 'generated-earlier' };
  }
  const notAfter = new Date();
  notAfter.setFullYear(notAfter.getFullYear() + 10);
  const pems = await generate([{ name: 'commonName', value: hostname }], {
    keySize: 2048,
    algorithm: 'sha256',
    notAfterDate: notAfter,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: hostname }] },
    ],
  });
  ensurePrivateDir(dataDir);
  writeFileSync(keyFile, pems.private, { mode: PRIVATE_FILE_MODE });
  writeFileSync(certFile, pems.cert, { mode: PRIVATE_FILE_MODE });
  log.warn(
    { phase: 'tls', cert: certFile, fingerprint: pems.fingerprint },
    `generated a self-signed TLS certificate for ${hostname}; set tls.cert and tls.key to use your own`,
  );
  return { cert: pems.cert, key: pems.private, source: 'generated' };
}
