/**
 * The console's HTTP policy, as data: the Content-Security-Policy of its pages, the one of a
 * message's HTML, and which requests count as coming from the console's own origin.
 */

/** No inline script, nothing from another origin; the API is the only thing the page talks to. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // Inline style attributes only: a message preview's iframe (srcdoc) inherits this policy and
  // email HTML is styled inline. Markup is never built from strings, so nothing can inject one.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** Headers on every console page and asset. */
export const CONSOLE_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export const changesState = (method: string): boolean => UNSAFE_METHODS.has(method.toUpperCase());

/**
 * Whether a cookie-carrying request comes from a page of this server: its Origin (or, when a
 * browser sent none, its Referer) names the scheme and host the request was made to. A request
 * carrying neither is refused too: every browser sends Origin on a state-changing fetch.
 */
export function fromOwnOrigin(headers: { origin?: string; referer?: string }, own: { protocol: string; host: string }): boolean {
  const expected = `${own.protocol}://${own.host}`.toLowerCase();
  const claimed = headers.origin ?? headers.referer;
  if (!claimed || claimed === 'null') return false;
  try {
    return new URL(claimed).origin.toLowerCase() === expected;
  } catch {
    return false;
  }
}

/** The value of one cookie in a Cookie header; the header is bounded by Node's header limit. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

export function sessionCookieHeader(name: string, value: string, opts: { maxAge: number; secure: boolean }): string {
  return [`${name}=${value}`, 'Path=/', `Max-Age=${opts.maxAge}`, 'HttpOnly', 'SameSite=Strict', ...(opts.secure ? ['Secure'] : [])].join('; ');
}
