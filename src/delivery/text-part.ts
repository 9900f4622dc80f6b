import { encode as base64Encode, wrap as base64Wrap } from 'nodemailer/lib/base64';
import { isPlainText } from 'nodemailer/lib/mime-funcs';
import { encode as qpEncode, wrap as qpWrap } from 'nodemailer/lib/qp';
import { normaliseBodyText } from '../dkim/sign.ts';

export type Slot = 'html' | 'text';

const LINE = 76;
const LONG_LINE = new RegExp(`[^\\r\\n]{${LINE + 1}}`);
const BARE_LINE_BREAK = /\r\n|\r|\n/g;

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
    // Lines are short once wrapped; only the line breaks of the content need CRLF.
    body = qpWrap(qpEncode(content), LINE).replace(BARE_LINE_BREAK, '\r\n');
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
