import { forbidden } from '../core/errors.ts';

/** Who is calling: an API key, scoped to a workspace or narrowed to one domain. */
export interface Principal {
  keyId: number;
  workspaceId: number;
  /** Set for a domain-scoped key. */
  domain: string | null;
  limits: { perMinute: number; perHour: number };
}

export const scopeOf = (domain: string | null): string => (domain ? `domain:${domain}` : 'workspace');

/** Domain-scoped keys send and read within their domain but manage nothing. */
export function requireWorkspaceKey(principal: Principal, what: string): void {
  if (principal.domain !== null) {
    throw forbidden(`A domain-scoped API key cannot ${what}; use a workspace key`);
  }
}
