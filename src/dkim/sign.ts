import { createHash, createPrivateKey, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import { domainToASCII } from 'node:url';
import type { DkimAlgorithm } from './keys.ts';

/**
 * mailauth's signer (`dkimSign`) puts into h= only the header fields present in the message,
 * so it cannot oversign. We sign ourselves (relaxed/relaxed, RFC 6376 §3.4.2 and §3.4.4),
 * choosing the h= list, and keep mailauth's relaxed body hash for bodies that need more than
 * their trailing empty lines removed. This module has no type declarations, hence the narrow
 * shape below.
 */
const require = createRequire(import.meta.url);

const { dkimBody } = require('mailauth/lib/dkim/body') as {
  dkimBody(
    canonicalization: 'relaxed',
    algorithm: 'sha256',
    maxBodyLength: false,
  ): {
    update(chunk: Buffer): void;
    digest(encoding: 'base64'): string;
  };
};

/**
 * The fields we sign when present. The list unsubscribe pair must be covered for Gmail and
 * Yahoo to honour one-click unsubscribe (RFC 8058 §4), and Feedback-ID for Gmail's feedback loop.
 */
export const DEFAULT_SIGNED_FIELDS = [
  'From',
  'To',
  'Cc',
  'Subject',
  'Date',
  'Message-ID',
  'Reply-To',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'Feedback-ID',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
] as const;

/**
 * Listed once more than present in h=, so a From field added in transit breaks the signature
 * (RFC 6376 §8.15): otherwise a second From above ours could be what a mail client displays.
 */
export const OVERSIGNED_FIELDS = ['From'] as const;

export interface DkimSignOptions {
  domain: string;
  selector: string;
  privateKeyPem: string;
  /** rsa-sha256 unless given; the key must be of that type. */
  algorithm?: DkimAlgorithm;
  headerFields?: string[];
  /** Milliseconds since the epoch for the t= tag; defaults to now. */
  now?: number;
}

/** RFC 5322 §2.1.1: at most 998 octets per line, excluding the CRLF. */
export const MAX_LINE_OCTETS = 998;

const CRLF = '\r\n';

function isWsp(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

/** Header lines fold before whitespace, which unfolding removes again (RFC 5322 §2.2.3). */
function foldHeaderLine(line: string): string[] {
  const out: string[] = [];
  let rest = line;
  while (rest.length > MAX_LINE_OCTETS) {
    let cut = -1;
    for (let i = MAX_LINE_OCTETS; i > 0; i--) {
      if (isWsp(rest.charCodeAt(i))) {
        cut = i;
        break;
      }
    }
    if (cut > 0) {
      out.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    } else {
      // A single word longer than a line: inserting folding whitespace is the only legal way left.
      out.push(rest.slice(0, MAX_LINE_OCTETS));
      rest = ` ${rest.slice(MAX_LINE_OCTETS)}`;
    }
  }
  out.push(rest);
  return out;
}

/**
 * Body lines break after the last space within the limit, else at the limit but never inside a
 * UTF-8 sequence. Servers that meet a longer line break it themselves (Exchange, Postfix
 * with `smtp_line_length_limit`) and the signature no longer verifies; breaking it here, before
 * signing, keeps the signature valid at the price of a line break in the text.
 */
function wrapBodyLine(line: string): string[] {
  const out: string[] = [];
  let rest = line;
  while (rest.length > MAX_LINE_OCTETS) {
    let cut = -1;
    for (let i = MAX_LINE_OCTETS - 1; i > 0; i--) {
      if (isWsp(rest.charCodeAt(i))) {
        cut = i + 1;
        break;
      }
    }
    if (cut < 0) {
      cut = MAX_LINE_OCTETS;
      while (cut > 1 && (rest.charCodeAt(cut) & 0xc0) === 0x80) cut--;
    }
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  out.push(rest);
  return out;
}

/**
 * Whether normalising would leave these bytes as they are: every line ends in CRLF, the last one
 * too, no CR stands alone and no line is over 998 octets. One `indexOf` per line break.
 */
export function isNormalised(raw: Buffer): boolean {
  let lines = 0;
  let start = 0;
  for (let lf = raw.indexOf(0x0a); lf >= 0; lf = raw.indexOf(0x0a, start)) {
    if (lf === 0 || raw[lf - 1] !== 0x0d || lf - 1 - start > MAX_LINE_OCTETS) return false;
    lines += 1;
    start = lf + 1;
  }
  if (start !== raw.length) return false;
  let crs = 0;
  for (let cr = raw.indexOf(0x0d); cr >= 0; cr = raw.indexOf(0x0d, cr + 1)) crs += 1;
  return crs === lines;
}

/**
 * Makes a message safe to sign and to send: CRLF line endings everywhere (a bare LF or CR is
 * rewritten by some hop, which breaks the body hash), no line over 998 octets, a final CRLF.
 * Works on octets (latin1 round-trip), so 8-bit content is untouched.
 */
export function normaliseMessage(raw: Buffer): Buffer {
  if (raw.length > 0 && isNormalised(raw)) return raw;
  const text = raw.toString('latin1').replace(/\r\n|\r|\n/g, CRLF);
  const split = text.indexOf(CRLF + CRLF);
  const head = split < 0 ? text : text.slice(0, split);
  const body = split < 0 ? '' : text.slice(split + 4);
  const headLines = head.split(CRLF).flatMap((line) => foldHeaderLine(line));
  let out = headLines.join(CRLF) + CRLF;
  if (split >= 0) {
    out += CRLF + normaliseBodyText(body);
    if (!out.endsWith(CRLF)) out += CRLF;
  }
  return Buffer.from(out, 'latin1');
}

/** Body text (octets as latin1) with CRLF line endings and no line over 998 octets. */
export function normaliseBodyText(body: string): string {
  return body
    .replace(/\r\n|\r|\n/g, CRLF)
    .split(CRLF)
    .flatMap((line) => wrapBodyLine(line))
    .join(CRLF);
}

/** Header block (with its last CRLF) and body of a normalised message. */
export function splitMessage(message: Buffer): { head: Buffer; body: Buffer } {
  const index = message.indexOf(CRLF + CRLF, 0, 'latin1');
  if (index < 0) return { head: message, body: Buffer.alloc(0) };
  return { head: message.subarray(0, index + 2), body: message.subarray(index + 4) };
}

/**
 * Parsed keys by PEM: delivery signs every recipient's copy, and parsing the PEM costs about as
 * much as the RSA signature itself. Bounded, since keys rotate and domains come and go.
 */
const parsedKeys = new Map<string, KeyObject>();

function privateKeyOf(pem: string): KeyObject {
  let key = parsedKeys.get(pem);
  if (!key) {
    key = createPrivateKey(pem);
    if (parsedKeys.size >= 256) parsedKeys.delete(parsedKeys.keys().next().value!);
    parsedKeys.set(pem, key);
  }
  return key;
}

const TAB = 0x09;
const SP_SP = Buffer.from('  ');
const SP_CRLF = Buffer.from(' \r\n');

/**
 * The relaxed body hash (bh=) of a normalised body (CRLF line ends) given in pieces. A body
 * with no tab, no run of spaces and no space at a line's end is its own relaxed form but for
 * its trailing empty lines, so it is hashed as it is; any other goes through mailauth's
 * canonicaliser.
 */
export function dkimBodyHash(body: Buffer[]): string {
  const whole = body.length === 1 ? body[0]! : Buffer.concat(body);
  const plain = !whole.includes(TAB) && !whole.includes(SP_SP) && !whole.includes(SP_CRLF) && whole[whole.length - 1] !== 0x20;
  if (!plain) {
    const hasher = dkimBody('relaxed', 'sha256', false);
    hasher.update(whole);
    return hasher.digest('base64');
  }
  // Empty lines at the end are ignored, and a body that is not empty ends in one CRLF.
  let end = whole.length;
  while (end >= 2 && whole[end - 2] === 0x0d && whole[end - 1] === 0x0a) end -= 2;
  const hash = createHash('sha256');
  if (end > 0) hash.update(whole.subarray(0, end)).update('\r\n');
  return hash.digest('base64');
}

/** One header field of a normalised block: its name as written, and the whole field with its folds, no final CRLF. */
interface HeaderField {
  name: string;
  field: string;
}

/** The fields of a normalised header block (octets as latin1), in order. */
function headerFields(head: string): HeaderField[] {
  const fields: HeaderField[] = [];
  let start = 0;
  while (start < head.length) {
    // A field ends at the CRLF that is not followed by folding whitespace.
    let end = head.indexOf(CRLF, start);
    while (end >= 0 && (head.charCodeAt(end + 2) === 0x20 || head.charCodeAt(end + 2) === 0x09)) end = head.indexOf(CRLF, end + 2);
    if (end < 0) end = head.length;
    const field = head.slice(start, end);
    const colon = field.indexOf(':');
    if (colon > 0) fields.push({ name: field.slice(0, colon).trim(), field });
    start = end + 2;
  }
  return fields;
}

const FOLD = /\r\n(?=[ \t])/g;
const WSP_RUN = /[ \t]+/g;

/** RFC 6376 §3.4.2: name in lower case, unfolded, runs of WSP as one space, none around the colon or at the end. */
function relaxedField(field: string): string {
  const colon = field.indexOf(':');
  const name = field.slice(0, colon).replace(WSP_RUN, '').toLowerCase();
  let value = field
    .slice(colon + 1)
    .replace(FOLD, '')
    .replace(WSP_RUN, ' ');
  if (value.charCodeAt(0) === 0x20) value = value.slice(1);
  if (value.charCodeAt(value.length - 1) === 0x20) value = value.slice(0, -1);
  return `${name}:${value}\r\n`;
}

/** A domain or selector as an A-label, as d= and s= must be written (RFC 6376 §3.5). */
function aLabel(name: string): string {
  if (!/[^\p{ASCII}]/u.test(name)) return name;
  return domainToASCII(name) || name;
}

const SIGNATURE_WIDTH = 76;
/** Where the b= tag's value is cut when it is longer than a line. */
const SIGNATURE_CHUNK = 75;

/** The signature field being folded: what is written, and the length of its last line. */
interface Folded {
  out: string;
  line: number;
}

function put(folded: Folded, piece: string, glue: string): void {
  if (folded.line + glue.length + piece.length > SIGNATURE_WIDTH && folded.line > 1) {
    folded.out += `${glue.trimEnd()}\r\n `;
    folded.line = 1;
  } else {
    folded.out += glue;
    folded.line += glue.length;
  }
  folded.out += piece;
  folded.line += piece.length;
}

/**
 * The field folded before a tag that would pass the width, and inside h= (after its colons)
 * and b= (every 75 characters) where those are longer than a line. Relaxed canonicalisation
 * unfolds it again, so where it folds does not change what is signed.
 *
 * This and `signatureField` are written without closures made per call: on Node 20 the
 * optimised code of such a closure is dropped at every full garbage collection and compiled
 * again (bench/NOTES.md, "Closures compiled again").
 */
function foldSignature(tags: string[]): string {
  const folded: Folded = { out: 'DKIM-Signature:', line: 'DKIM-Signature:'.length };
  for (let i = 0; i < tags.length; i++) {
    const tag = tags[i]!;
    const glue = i === 0 ? ' ' : '; ';
    if (tag.startsWith('b=')) {
      for (let at = 0; at === 0 || at < tag.length; at += SIGNATURE_CHUNK) put(folded, tag.slice(at, at + SIGNATURE_CHUNK), at === 0 ? glue : ' ');
    } else if (tag.startsWith('h=')) {
      const words = tag.split(' ');
      for (let k = 0; k < words.length; k++) put(folded, words[k]!, k === 0 ? glue : ' ');
    } else {
      put(folded, tag, glue);
    }
  }
  return folded.out;
}

/** The names a key signs, in lower case. */
function wantedFields(list: readonly string[]): Set<string> {
  const wanted = new Set<string>();
  for (const name of list) wanted.add(name.toLowerCase());
  return wanted;
}

/**
 * A DKIM-Signature field (with its CRLF) per key for a normalised header block and the hash of
 * its body, RSA-SHA256 or Ed25519-SHA256 (RFC 8463), relaxed/relaxed. Fields are signed
 * bottom-up, every instance present, as RFC 6376 §5.4.2 asks, so verifiers pick the same instances.
 */
function signatureFields(fields: HeaderField[], bodyHash: string, keys: DkimSignOptions[]): Buffer[] {
  const signed: Buffer[] = [];
  for (const opts of keys) signed.push(signatureField(fields, bodyHash, opts));
  return signed;
}

function signatureField(fields: HeaderField[], bodyHash: string, opts: DkimSignOptions): Buffer {
  const algorithm = opts.algorithm ?? 'rsa-sha256';
  const keyType = algorithm === 'ed25519-sha256' ? 'ed25519' : 'rsa';
  const privateKey = privateKeyOf(opts.privateKeyPem);
  if (privateKey.asymmetricKeyType !== keyType) {
    throw new Error(`DKIM key ${opts.selector} for ${opts.domain} is ${privateKey.asymmetricKeyType}, expected ${keyType}`);
  }
  const wanted = wantedFields(opts.headerFields ?? DEFAULT_SIGNED_FIELDS);
  // Joined with a space after each colon so a long list can fold; unfolding keeps it valid.
  let h = '';
  let canonical = '';
  for (let i = fields.length - 1; i >= 0; i--) {
    const f = fields[i]!;
    if (!wanted.has(f.name.toLowerCase())) continue;
    h += h === '' ? f.name : `: ${f.name}`;
    canonical += relaxedField(f.field);
  }
  for (const name of OVERSIGNED_FIELDS) if (wanted.has(name.toLowerCase())) h += h === '' ? name : `: ${name}`;
  // t= is always passed in: read twice from the clock, a second boundary between the two reads
  // would sign one value and publish another.
  const t = Math.floor((opts.now ?? Date.now()) / 1000);
  const tags = [
    `v=1`,
    `a=${algorithm}`,
    `c=relaxed/relaxed`,
    `d=${aLabel(opts.domain)}`,
    `h=${h}`,
    `q=dns/txt`,
    `s=${aLabel(opts.selector)}`,
    `t=${t}`,
    `bh=${bodyHash}`,
  ];
  canonical += relaxedField(`DKIM-Signature: ${tags.join('; ')}; b=`).slice(0, -2);
  // RFC 8463 §3: Ed25519 signs the SHA-256 hash of the canonicalised header, not the header itself.
  const data = Buffer.from(canonical, 'latin1');
  const signature = (keyType === 'rsa' ? cryptoSign('rsa-sha256', data, privateKey) : cryptoSign(null, createHash('sha256').update(data).digest(), privateKey)).toString(
    'base64',
  );
  tags.push(`b=${signature}`);
  return Buffer.from(`${foldSignature(tags)}\r\n`, 'latin1');
}

/**
 * One DKIM-Signature field per key, in the order given (the first on top); neither signature
 * covers the other (h= never names DKIM-Signature), so a receiver may check either alone.
 */
export function dkimSignatureFields(head: Buffer, bodyHash: string, keys: DkimSignOptions[]): Buffer[] {
  return signatureFields(headerFields(head.toString('latin1')), bodyHash, keys);
}

/** Normalises a whole message and returns it with a DKIM-Signature field per key prepended. */
export async function signMessage(raw: Buffer, opts: DkimSignOptions | DkimSignOptions[]): Promise<Buffer> {
  const message = normaliseMessage(raw);
  const { head, body } = splitMessage(message);
  return Buffer.concat([...dkimSignatureFields(head, dkimBodyHash([body]), Array.isArray(opts) ? opts : [opts]), message]);
}
