import { domainToASCII } from 'node:url';

export interface Mailbox {
  /** Display name, unquoted; null when absent. */
  name: string | null;
  /** `local@domain` with the domain lowercased (and in ASCII). */
  address: string;
  domain: string;
}

export type AddressProblem = { problem: string };

// RFC 5322 dot-atom local part; quoted local parts are refused on purpose (rare, and a classic
// route for smuggling `%` or `!` relaying syntax past naive checks).
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

function checkAddress(raw: string): { address: string; domain: string } | AddressProblem {
  const at = raw.lastIndexOf('@');
  if (at <= 0 || at === raw.length - 1) return { problem: 'is not of the form local@domain' };
  const local = raw.slice(0, at);
  if (local.length > 64) return { problem: 'has a local part over 64 characters' };
  if (!LOCAL.test(local)) return { problem: 'has characters not allowed in a mailbox name' };
  const domain = domainToASCII(raw.slice(at + 1).toLowerCase());
  const labels = domain.split('.');
  if (!domain || domain.length > 253 || labels.length < 2 || !labels.every((l) => LABEL.test(l)) || /^\d+$/.test(labels.at(-1)!)) {
    return { problem: 'has an invalid domain' };
  }
  return { address: `${local}@${domain}`, domain };
}

const isSpace = (c: string) => c.trim() === '';

/**
 * `"quoted name"` with its backslash escapes removed, or null when the text is not exactly one
 * quoted string. Scanned by index: a pattern such as `"(?:[^"\\]|\\.)*"` next to optional
 * spaces backtracks over long runs of spaces, and the API takes a thousand addresses per request.
 */
function unquote(text: string): string | null {
  let out = '';
  for (let i = 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') {
      if (i + 1 >= text.length - 1) return null;
      out += text[++i];
    } else if (c === '"') {
      return i === text.length - 1 ? out : null;
    } else {
      out += c;
    }
  }
  return null;
}

/**
 * Parses `addr@domain` or `Name <addr@domain>` (the name may be quoted). Every step is a scan
 * from one end, linear in the input.
 */
export function parseMailbox(input: string): Mailbox | AddressProblem {
  if (/[\r\n]/.test(input)) return { problem: 'must not contain line breaks' };
  const text = input.trim();
  let name: string | null = null;
  let raw = text;
  const lt = text.endsWith('>') ? text.lastIndexOf('<') : -1;
  if (lt >= 0) {
    raw = text.slice(lt + 1, -1);
    let end = lt;
    while (end > 0 && isSpace(text[end - 1])) end--;
    const display = text.slice(0, end);
    const parsedName = display.startsWith('"') ? unquote(display) : /[<>"]/.test(display) ? null : display;
    if (parsedName === null || raw === '' || /[<>\s]/.test(raw)) return { problem: 'is not a single address' };
    name = parsedName.trim() === '' ? null : display.startsWith('"') ? parsedName : parsedName.trim();
  } else if (/[<>"\s,;]/.test(text)) {
    return { problem: 'is not a single address' };
  }
  const checked = checkAddress(raw);
  return 'problem' in checked ? checked : { name, ...checked };
}

export const isProblem = (v: Mailbox | AddressProblem): v is AddressProblem => 'problem' in v;

/** `"Name" <addr>` with the name quoted when it needs to be, for headers. */
export function formatMailbox(m: Mailbox): string {
  if (!m.name) return m.address;
  const safe = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~ -]+$/.test(m.name) ? m.name : `"${m.name.replace(/(["\\])/g, '\\$1')}"`;
  return `${safe} <${m.address}>`;
}
