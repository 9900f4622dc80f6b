import { createHash, createPrivateKey, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import type { DkimAlgorithm } from './keys.ts';

/**
 * mailauth's signer (`dkimSign`) puts into h= only the header fields present in the message,
 * so it cannot oversign. We run the same steps it runs (its header parser, its relaxed body
 * hash, its relaxed header canonicalisation and signature formatting) and choose the h= list
 * ourselves. These modules have no type declarations, hence the narrow shapes below.
 */
const require = createRequire(import.meta.url);

interface ParsedHeader {
  key: string | null;
  casedKey: string | undefined;
  line: Buffer;
}
interface SignatureTags {
  [tag: string]: string | number | undefined;
  b?: string;
}
const tools = require('mailauth/lib/tools') as {
  parseHeaders(block: Buffer): { parsed: ParsedHeader[] };
  formatSignatureHeaderLine(type: 'DKIM', tags: SignatureTags, folded: boolean): string;
};
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
const { relaxedHeaders } = require('mailauth/lib/dkim/header/relaxed') as {
  relaxedHeaders(
    type: 'DKIM',
    signing: { keys: string; headers: ParsedHeader[] },
    options: {
      signingDomain: string;
      selector: string;
      algorithm: DkimAlgorithm;
      canonicalization: 'relaxed/relaxed';
      bodyHash: string;
      signTime: Date;
    },
  ): { canonicalizedHeader: Buffer; dkimHeaderOpts: SignatureTags };
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
 * Makes a message safe to sign and to send: CRLF line endings everywhere (a bare LF or CR is
 * rewritten by some hop, which breaks the body hash), no line over 998 octets, a final CRLF.
 * Works on octets (latin1 round-trip), so 8-bit content is untouched.
 */
export function normaliseMessage(raw: Buffer): Buffer {
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

/** The relaxed body hash (bh=) of a normalised body given in pieces. */
export function dkimBodyHash(body: Buffer[]): string {
  const hasher = dkimBody('relaxed', 'sha256', false);
  for (const chunk of body) hasher.update(chunk);
  return hasher.digest('base64');
}

/**
 * The DKIM-Signature field (with its CRLF) for a normalised header block and the hash of its
 * body, RSA-SHA256 or Ed25519-SHA256 (RFC 8463), relaxed/relaxed. Fields are signed bottom-up, every instance present, as
 * RFC 6376 §5.4.2 asks, so verifiers pick the same instances.
 */
export function dkimSignatureField(head: Buffer, bodyHash: string, opts: DkimSignOptions): Buffer {
  const algorithm = opts.algorithm ?? 'rsa-sha256';
  const keyType = algorithm === 'ed25519-sha256' ? 'ed25519' : 'rsa';
  const privateKey = privateKeyOf(opts.privateKeyPem);
  if (privateKey.asymmetricKeyType !== keyType) {
    throw new Error(`DKIM key ${opts.selector} for ${opts.domain} is ${privateKey.asymmetricKeyType}, expected ${keyType}`);
  }
  const wanted = new Set((opts.headerFields ?? DEFAULT_SIGNED_FIELDS).map((name) => name.toLowerCase()));
  const parsed = tools.parseHeaders(head).parsed;
  const selected = parsed.filter((header) => header.key !== null && wanted.has(header.key)).reverse();
  const oversigned = OVERSIGNED_FIELDS.filter((name) => wanted.has(name.toLowerCase()));
  const keys = [...selected.map((header) => header.casedKey ?? ''), ...oversigned].join(': ');

  // t= is always passed in: left to mailauth, it is read twice from the clock, and a second
  // boundary between the two reads would sign one value and publish another.
  const signTime = new Date(opts.now ?? Date.now());
  const { canonicalizedHeader, dkimHeaderOpts } = relaxedHeaders(
    'DKIM',
    { keys, headers: selected },
    {
      signingDomain: opts.domain,
      selector: opts.selector,
      algorithm,
      canonicalization: 'relaxed/relaxed',
      bodyHash,
      signTime,
    },
  );
  // RFC 8463 §3: Ed25519 signs the SHA-256 hash of the canonicalised header, not the header itself.
  const signature = (
    keyType === 'rsa'
      ? cryptoSign('rsa-sha256', canonicalizedHeader, privateKey)
      : cryptoSign(null, createHash('sha256').update(canonicalizedHeader).digest(), privateKey)
  ).toString('base64');
  return Buffer.from(tools.formatSignatureHeaderLine('DKIM', { ...dkimHeaderOpts, b: signature }, true) + CRLF, 'latin1');
}

/**
 * One DKIM-Signature field per key, in the order given (the first on top); neither signature
 * covers the other (h= never names DKIM-Signature), so a receiver may check either alone.
 */
export function dkimSignatureFields(head: Buffer, bodyHash: string, keys: DkimSignOptions[]): Buffer[] {
  return keys.map((key) => dkimSignatureField(head, bodyHash, key));
}

/** Normalises a whole message and returns it with a DKIM-Signature field per key prepended. */
export async function signMessage(raw: Buffer, opts: DkimSignOptions | DkimSignOptions[]): Promise<Buffer> {
  const message = normaliseMessage(raw);
  const { head, body } = splitMessage(message);
  return Buffer.concat([...dkimSignatureFields(head, dkimBodyHash([body]), Array.isArray(opts) ? opts : [opts]), message]);
}
