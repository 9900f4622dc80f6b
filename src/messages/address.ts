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

/** Parses `addr@domain` or `Name <addr@domain>` (the name may be quoted). */
export function parseMailbox(input: string): Mailbox | AddressProblem {
  if (/[\r\n]/.test(input)) return { problem: 'must not contain line breaks' };
  const text = input.trim();
  const angle = /^(?<name>"(?:[^"\\]|\\.)*"|[^<>"]*?)\s*<(?<addr>[^<>\s]+)>$/.exec(text);
  let name: string | null = null;
  let raw = text;
  if (angle?.groups) {
    const n = angle.groups.name.trim();
    name = n.startsWith('"') ? n.slice(1, -1).replace(/\\(.)/g, '$1') : n;
    if (name === '') name = null;
    raw = angle.groups.addr;
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
