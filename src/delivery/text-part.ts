import { encode as base64Encode, wrap as base64Wrap } from 'nodemailer/lib/base64';
import { isPlainText } from 'nodemailer/lib/mime-funcs';
import { normaliseBodyText } from '../dkim/sign.ts';

export type Slot = 'html' | 'text';

const LINE = 76;
const LONG_LINE = new RegExp(`[^\\r\\n]{${LINE + 1}}`);

/** nodemailer's choice for text it encodes: quoted-printable while Latin letters outnumber the rest. */
function prefersQuotedPrintable(value: string): boolean {
  let other = 0;
  let latin = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code <= 0x08 || code === 0x0b || code === 0x0c || (code >= 0x0e && code <= 0x1f) || code >= 0x80) other++;
    else if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) latin++;
  }
  return other < latin;
}

/** One encoded text part: its header fields (each ending in CRLF) and its body (no CRLF after it). */
export interface EncodedPart {
  contentType: string;
  /** The Content-Transfer-Encoding field, empty for an empty part. */
  transferEncoding: string;
  body: string;
}

/**
 * One text part encoded the way nodemailer's MIME builder would (7bit for short ASCII lines,
 * else quoted-printable or base64), without building a MIME tree around it. The render step
 * encodes each recipient's own HTML here, so it must stay cheap.
 */
export function encodeText(slot: Slot, content: string): EncodedPart {
  let encoding: string;
  let body: string;
  if (isPlainText(content) && !LONG_LINE.test(content)) {
    encoding = '7bit';
    body = normaliseBodyText(content);
  } else if (prefersQuotedPrintable(content)) {
    encoding = 'quoted-printable';
    body = quotedPrintable(content);
  } else {
    encoding = 'base64';
    body = base64Wrap(base64Encode(content), LINE);
  }
  return {
    contentType: `Content-Type: ${slot === 'html' ? 'text/html' : 'text/plain'}; charset=utf-8\r\n`,
    // An empty part has nothing to encode, and nodemailer names no encoding for it either.
    transferEncoding: content === '' ? '' : `Content-Transfer-Encoding: ${encoding}\r\n`,
    body,
  };
}

const HEX = Buffer.from('0123456789ABCDEF', 'latin1');
/** How far back a soft line break may move to fall after a space rather than inside a word. */
const WORD_BACKTRACK = 24;

/**
 * Quoted-printable (RFC 2045 §6.7) in one pass over the UTF-8 octets: every line break of the
 * content (CRLF, CR or LF) becomes CRLF, whitespace before a line break or at the end is
 * encoded, and a soft line break keeps each line within 76 characters, after a space where one
 * is near, never inside an encoded octet or a UTF-8 sequence.
 */
export function quotedPrintable(content: string): string {
  const src = Buffer.from(content, 'utf8');
  const n = src.length;
  // Three characters per octet at most, and a soft break holds 40 characters before it at least.
  const out = Buffer.allocUnsafe(n * 3 + Math.ceil((n * 3) / 40) * 3 + 16);
  let o = 0;
  let lineStart = 0;
  let afterSpace = -1;
  for (let i = 0; i < n; i++) {
    const c = src[i]!;
    if (c === 0x0d || c === 0x0a) {
      if (c === 0x0d && src[i + 1] === 0x0a) i++;
      out[o++] = 0x0d;
      out[o++] = 0x0a;
      lineStart = o;
      afterSpace = -1;
      continue;
    }
    let octets = 1;
    let literal: boolean;
    if (c === 0x20 || c === 0x09) {
      const next = i + 1 < n ? src[i + 1] : 0x0a;
      literal = next !== 0x0a && next !== 0x0d;
    } else {
      literal = c >= 0x21 && c <= 0x7e && c !== 0x3d;
      if (c >= 0xc0) {
        const want = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
        while (octets < want && i + octets < n && (src[i + octets]! & 0xc0) === 0x80) octets++;
      }
    }
    const width = literal ? 1 : octets * 3;
    if (o - lineStart + width > LINE - 1) {
      if (afterSpace > lineStart && o - afterSpace <= WORD_BACKTRACK) {
        // At most WORD_BACKTRACK octets: a loop is cheaper than a native call.
        for (let k = o - 1; k >= afterSpace; k--) out[k + 3] = out[k]!;
        out[afterSpace] = 0x3d;
        out[afterSpace + 1] = 0x0d;
        out[afterSpace + 2] = 0x0a;
        o += 3;
        lineStart = afterSpace + 3;
      } else {
        out[o++] = 0x3d;
        out[o++] = 0x0d;
        out[o++] = 0x0a;
        lineStart = o;
      }
      afterSpace = -1;
    }
    if (literal) {
      out[o++] = c;
      if (c === 0x20 || c === 0x09) afterSpace = o;
      continue;
    }
    for (let k = 0; k < octets; k++) {
      const b = src[i + k]!;
      out[o++] = 0x3d;
      out[o++] = HEX[b >> 4]!;
      out[o++] = HEX[b & 15]!;
    }
    i += octets - 1;
  }
  return out.toString('latin1', 0, o);
}
