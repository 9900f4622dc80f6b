// Addresses, SMTP reply codes (RFC 5321 §4.2) and enhanced status codes (RFC 3463) as they
// appear inside free text: "550 5.1.1 <x@y>... User Unknown", "said: 550-5.7.1 [1.2.3.4]".

// Local part without spaces or brackets; the domain either a dotted name or an address literal.
// Anonymised samples use bare hosts like "localhost.localdomain", so no TLD list is applied.
// The lookbehind starts a match only at the beginning of a run of local-part characters: a match
// can never begin inside one, and without it a long run without "@" is scanned from every character.
const ADDRESS =
  /(?<![A-Za-z0-9!#$%&'*+/=?^_`{|}~.-])[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+|\[[0-9A-Fa-f:.]+\])/;
const ADDRESS_ONLY = new RegExp(`^${ADDRESS.source}$`);
export const ADDRESS_IN_TEXT = new RegExp(ADDRESS.source, 'g');

export function isValidAddress(s: string): boolean {
  if (s.length > 254 || !ADDRESS_ONLY.test(s)) return false;
  const local = s.slice(0, s.lastIndexOf('@'));
  return local.length > 0 && local.length <= 64 && !local.startsWith('.') && !local.endsWith('.');
}

/** "rfc822; <Kijitora@Example.jp>" → "Kijitora@Example.jp", or null when no valid address is in it. */
const QUOTED_LOCAL = /"[^"\r\n]{1,62}"@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+/;

export function cleanAddress(value: string | null | undefined): string | null {
  if (!value) return null;
  let v = value.trim().replace(/^[A-Za-z0-9-]+;\s*/, '');
  // RFC 5321 quoted local part: <"neko....nyaan...."@example.org>
  const quoted = QUOTED_LOCAL.exec(v);
  if (quoted) return quoted[0];
  const angle = /<([^<>\s@]+@[^<>\s]+)>/.exec(v);
  if (angle) v = angle[1]!;
  v = trimChars(v, LEADING_JUNK, TRAILING_JUNK);
  if (isValidAddress(v)) return v;
  const m = ADDRESS.exec(v);
  if (!m) return null;
  const bare = trimChars(m[0], '.', '.');
  return isValidAddress(bare) ? bare : null;
}

const LEADING_JUNK = `"'(< \t\n\r\f\v`;
const TRAILING_JUNK = `>"'),.;: \t\n\r\f\v`;

/** Strips characters of `lead` from the start and of `trail` from the end, by index (linear). */
function trimChars(v: string, lead: string, trail: string): string {
  let start = 0;
  let end = v.length;
  while (start < end && lead.includes(v[start]!)) start++;
  while (end > start && trail.includes(v[end - 1]!)) end--;
  return v.slice(start, end);
}

// Class 2/4/5, subject 0-7 (RFC 3463 §3.1), detail up to three digits. Not part of a longer
// dotted number, so the "2.153" in the address literal 192.0.2.153 is not a status code.
const ENHANCED = /(?<![\d.])([245])\.([0-7])\.(\d{1,3})(?![\d]|\.\d)/;
const ENHANCED_ALL = new RegExp(ENHANCED.source, 'g');

/** All enhanced codes in order; a 2.x.x success code in a failure text is never the cause. */
export function findFailureEnhanced(text: string | null | undefined): string | null {
  if (!text) return null;
  for (const m of text.matchAll(ENHANCED_ALL)) if (m[1] !== '2') return `${m[1]}.${m[2]}.${m[3]}`;
  return null;
}

// A reply code opens the reply or follows "said:", "error:", a colon, a bracket; it is followed
// by a space, a hyphen (multi-line reply) or the end. "port 25" or "12345" never match.
const REPLY = /(?:^|[\s:;([>"])([45][0-5][0-9])(?=[ -]|$|\])/;
const REPLY_ALL = new RegExp(REPLY.source, 'gm');

export function findReplyCode(text: string | null | undefined): number | null {
  if (!text) return null;
  for (const m of text.matchAll(REPLY_ALL)) {
    const n = Number(m[1]);
    // Reply codes are x0y..x5y; "500 MB" style sizes are rare enough to accept.
    if (n >= 400 && n < 600) return n;
  }
  return null;
}

export function statusClass(status: string | null | undefined): '2' | '4' | '5' | null {
  const c = status?.[0];
  return c === '2' || c === '4' || c === '5' ? c : null;
}

/** Folds runs of whitespace so multi-line diagnostics compare as one line. */
export function fold(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
