import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/ports.ts';
import type { TokenKeyring } from '../tokens/index.ts';

/** How long a console sign-in lasts; signing in again starts a new one. */
export const SESSION_SECONDS = 12 * 3600;

export const SESSION_COOKIE = 'mailsvc_session';

const VERSION = 's1';
const MAX_COOKIE_CHARS = 200;

const mac = (key: Buffer | string, text: string): string => createHmac('sha256', key).update(text, 'utf8').digest('base64url');

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export interface SessionClaims {
  keyId: number;
  expiresAt: number;
}

/**
 * Console sessions as signed cookies: `s1.<kid>.<api key id>.<expiry>.<nonce>.<mac>`, signed
 * with a server secret every process shares. The cookie names the key by its id only, so the API
 * key cannot be recovered from it; every request loads that key again, so revoking the key ends
 * its sessions at once. The CSRF token is an HMAC of the cookie: it needs no storage and is
 * worthless without the cookie it was derived from.
 */
export class ConsoleSessions {
  constructor(private readonly deps: { keyring: TokenKeyring; clock: Clock }) {}

  issue(keyId: number): { cookie: string; claims: SessionClaims } {
    const { keyring, clock } = this.deps;
    const expiresAt = Math.floor(clock.now() / 1000) + SESSION_SECONDS;
    const body = `${VERSION}.${keyring.current}.${keyId}.${expiresAt}.${randomBytes(12).toString('base64url')}`;
    return { cookie: `${body}.${mac(keyring.keys[keyring.current], body)}`, claims: { keyId, expiresAt } };
  }

  /** The claims of a genuine, unexpired cookie; null for anything else. */
  verify(cookie: string | undefined): SessionClaims | null {
    if (!cookie || cookie.length > MAX_COOKIE_CHARS) return null;
    const parts = cookie.split('.');
    if (parts.length !== 6 || parts[0] !== VERSION) return null;
    const [, kid, keyId, expiry, , signature] = parts;
    const key = Object.hasOwn(this.deps.keyring.keys, kid) ? this.deps.keyring.keys[kid] : undefined;
    if (!key || !sameText(signature, mac(key, parts.slice(0, 5).join('.')))) return null;
    if (!/^[1-9]\d{0,15}$/.test(keyId) || !/^\d{1,12}$/.test(expiry)) return null;
    const expiresAt = Number(expiry);
    if (expiresAt * 1000 <= this.deps.clock.now()) return null;
    return { keyId: Number(keyId), expiresAt };
  }

  /** The CSRF token bound to one cookie. */
  csrfToken(cookie: string): string {
    const kid = cookie.split('.')[1];
    const key = this.deps.keyring.keys[kid] ?? this.deps.keyring.keys[this.deps.keyring.current];
    return mac(key, `csrf.${cookie}`);
  }

  csrfMatches(cookie: string, token: string | undefined): boolean {
    return token !== undefined && sameText(token, this.csrfToken(cookie));
  }
}
