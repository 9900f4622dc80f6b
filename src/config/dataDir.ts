import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';

// The data directory holds the SQLite database (DKIM private keys, token-signing secrets, API key
// hashes) and generated TLS keys: nobody but the service's user may list or read it, whatever
// the umask. Modes passed to mkdir/open are reduced by the umask, hence the explicit chmod.
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `dir` (and missing parents) if needed and makes it 0700, also when it already existed. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(dir, PRIVATE_DIR_MODE);
}

/** Creates `file` empty if it does not exist, and makes it 0600 either way. */
export function ensurePrivateFile(file: string): void {
  if (!existsSync(file)) closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
  chmodSync(file, PRIVATE_FILE_MODE);
}

/** Makes `file` 0600 if it exists (SQLite's -wal and -shm files come and go). */
export function restrictIfPresent(file: string): void {
  if (existsSync(file)) chmodSync(file, PRIVATE_FILE_MODE);
}
