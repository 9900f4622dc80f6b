// A deliberately small MIME reader for bounce and complaint reports.
//
// Reports are machine-written, often broken (truncated by the sender's size limit, boundaries
// that never close, 8-bit bodies without a charset), and we need hundreds per second. A full
// parser such as mailparser decodes every part and builds address objects we never look at, so
// we split the raw bytes ourselves: everything structural is read as latin1 (one char per byte,
// lossless), and only the human-readable text is decoded with its declared charset.

export interface Header {
  name: string; // lowercased
  value: string; // unfolded, trimmed, still latin1
}

export interface MimePart {
  headers: Header[];
  contentType: string; // "type/subtype", lowercased; "text/plain" when absent (RFC 2045 §5.2)
  params: Record<string, string>;
  body: string; // transfer-decoded, latin1
  parts: MimePart[]; // children of a multipart
}

import { REPORT_LIMITS } from './limits.ts';

const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;

/**
 * Parses a header block (the first REPORT_LIMITS.headerBlockBytes of it, at most
 * REPORT_LIMITS.headerFields fields); lines that are neither a field nor a continuation are
 * skipped. Continuations are collected and joined once, so a field folded over thousands of
 * lines costs no more than its length.
 */
export function parseHeaders(block: string): Header[] {
  const out: Header[] = [];
  let pieces: string[] = [];
  const flush = () => {
    const last = out[out.length - 1];
    if (last && pieces.length > 0) last.value = pieces.filter((p) => p !== '').join(' ');
    pieces = [];
  };
  for (const line of block.slice(0, REPORT_LIMITS.headerBlockBytes).split('\n')) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && out.length > 0) {
      pieces.push(line.trim());
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trimEnd();
    if (!FIELD_NAME.test(name)) continue;
    if (out.length >= REPORT_LIMITS.headerFields) break;
    flush();
    const value = line.slice(colon + 1).trim();
    out.push({ name: name.toLowerCase(), value });
    pieces = [value];
  }
  flush();
  return out;
}

export function header(headers: Header[], name: string): string | null {
  const h = headers.find((x) => x.name === name);
  return h ? h.value : null;
}

/** Splits "headers\n\nbody"; a message with no blank line is all headers (truncated reports). */
export function splitHeadBody(text: string): { head: string; body: string } {
  // Some reports start with an mbox "From " line; it is not a header.
  let start = 0;
  if (text.startsWith('From ')) start = text.indexOf('\n') + 1 || text.length;
  const i = text.indexOf('\n\n', start);
  if (i < 0) return { head: text.slice(start), body: '' };
  return { head: text.slice(start, i), body: text.slice(i + 2) };
}

export function parseContentType(value: string | null): { type: string; params: Record<string, string> } {
  const params: Record<string, string> = {};
  if (!value) return { type: 'text/plain', params };
  const semi = value.indexOf(';');
  const type = (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase();
  const re = /;\s*([A-Za-z0-9_*.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"?|([^;\s]*))/g;
  for (let m = re.exec(value); m; m = re.exec(value)) {
    params[m[1]!.toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '');
  }
  return { type: /^[a-z0-9.+-]+\/[a-z0-9.+-]+$/.test(type) ? type : 'text/plain', params };
}

/** Index after the last character of `line` that is not a space or tab (RFC 2045 §6.7 rule 3). */
function endWithoutTrailingBlanks(line: string): number {
  let end = line.length;
  while (end > 0 && (line.charCodeAt(end - 1) === 0x20 || line.charCodeAt(end - 1) === 0x09)) end--;
  return end;
}

export function decodeQuotedPrintable(s: string): string {
  // Trailing blanks are dropped and soft line breaks ("=" at the end) joined, line by line:
  // a pattern such as /[ \t]+$/gm retries from every blank of a long run (quadratic).
  const lines = s.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const end = endWithoutTrailingBlanks(line);
    const soft = end > 0 && line.charCodeAt(end - 1) === 0x3d && i < lines.length - 1;
    out.push(soft ? line.slice(0, end - 1) : i < lines.length - 1 ? `${line.slice(0, end)}\n` : line.slice(0, end));
  }
  return out.join('').replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

export function decodeTransfer(body: string, encoding: string | null): string {
  const enc = (encoding ?? '').trim().toLowerCase();
  if (enc === 'base64') {
    const clean = body.replace(/[^A-Za-z0-9+/=]/g, '');
    return Buffer.from(clean, 'base64').toString('latin1');
  }
  if (enc === 'quoted-printable') return decodeQuotedPrintable(body);
  return body;
}

/** Decodes latin1-held bytes as `charset`; unknown or broken charsets fall back to UTF-8 then latin1. */
export function decodeCharset(bytes: string, charset: string | undefined): string {
  const buf = Buffer.from(bytes, 'latin1');
  // Undeclared 8-bit text in bounces is almost always UTF-8 or, in Japanese samples, ISO-2022-JP
  // (pure 7-bit with ESC sequences), so sniff the escape before trusting the label.
  let cs = (charset ?? '').trim().toLowerCase();
  if (!cs || cs === 'us-ascii') cs = bytes.includes('\x1b$B') || bytes.includes('\x1b$@') ? 'iso-2022-jp' : 'utf-8';
  try {
    return new TextDecoder(cs, { fatal: cs === 'utf-8' }).decode(buf);
  } catch {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(buf);
    } catch {
      return bytes;
    }
  }
}

/** RFC 2047 encoded-words in a header value (Subject of an auto-reply may be encoded). */
export function decodeWords(value: string): string {
  // Raw 8-bit header text (RFC 6532 or just careless) is nearly always UTF-8.
  if (/[\x80-\xff]/.test(value)) value = decodeCharset(value, 'utf-8');
  return value.replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=\s*(?==\?)?/g, (_, cs: string, enc: string, text: string) => {
    const bytes =
      enc.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('latin1')
        : text.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
    return decodeCharset(bytes, cs.split('*')[0]); // RFC 2231 language suffix: utf-8*en
  });
}

function splitMultipart(body: string, boundary: string, budget: Budget): string[] | null {
  const delim = `--${boundary}`;
  const parts: string[] = [];
  let pos = body.startsWith(delim) ? 0 : body.indexOf(`\n${delim}`) + 1;
  if (pos < 0 || (pos === 0 && !body.startsWith(delim))) return null;
  for (;;) {
    const lineEnd = body.indexOf('\n', pos);
    const marker = body.slice(pos + delim.length, lineEnd < 0 ? body.length : lineEnd);
    if (marker.startsWith('--') || lineEnd < 0 || budget.parts <= 0) break;
    budget.parts--;
    const next = body.indexOf(`\n${delim}`, lineEnd);
    // A report cut off by a size limit never closes its last part: keep what arrived.
    parts.push(body.slice(lineEnd + 1, next < 0 ? body.length : next));
    if (next < 0) break;
    pos = next + 1;
  }
  return parts;
}

const HEADER_LINE = /^(?:From |[\x21-\x39\x3b-\x7e]+[ \t]*:)/;

/** Parts left to read in the whole message (REPORT_LIMITS.mimeParts). */
interface Budget {
  parts: number;
}

function buildPart(text: string, depth: number, budget: Budget, defaultType = 'text/plain'): MimePart {
  // Text that does not open with a header field is all body (garbage, or a headerless part).
  const { head, body } = HEADER_LINE.test(text) ? splitHeadBody(text) : { head: '', body: text };
  const headers = parseHeaders(head);
  const ctHeader = header(headers, 'content-type');
  const { type, params } = ctHeader ? parseContentType(ctHeader) : { type: defaultType, params: {} };
  const decoded = type.startsWith('multipart/') ? body : decodeTransfer(body, header(headers, 'content-transfer-encoding'));
  const part: MimePart = { headers, contentType: type, params, body: decoded, parts: [] };
  if (type.startsWith('multipart/') && depth < REPORT_LIMITS.mimeDepth) {
    const chunks = params.boundary ? splitMultipart(body, params.boundary, budget) : null;
    if (chunks) {
      // RFC 2046 §5.1.5: parts of multipart/digest default to message/rfc822.
      const childDefault = type === 'multipart/digest' ? 'message/rfc822' : 'text/plain';
      part.parts = chunks.map((c) => buildChild(c, depth + 1, budget, childDefault));
    } else {
      // Broken or missing boundary: read the whole body as text so notices still parse.
      part.contentType = 'text/plain';
    }
  }
  return part;
}

function buildChild(text: string, depth: number, budget: Budget, defaultType: string): MimePart {
  // A part that starts with a blank line has no headers at all.
  if (text.startsWith('\n')) {
    return { headers: [], contentType: defaultType, params: {}, body: text.slice(1), parts: [] };
  }
  return buildPart(text, depth, budget, defaultType);
}

/** Parses a whole message. `raw` is the message as latin1 with LF line ends. */
export function parseMime(raw: string): MimePart {
  return buildPart(raw, 0, { parts: REPORT_LIMITS.mimeParts });
}

/** Every leaf part, depth first, in message order. */
export function leaves(part: MimePart): MimePart[] {
  if (part.parts.length === 0) return [part];
  return part.parts.flatMap(leaves);
}

/** Normalises CRLF/CR to LF so every later pattern can rely on "\n". */
export function toLatin1Lf(raw: Buffer): string {
  return raw.toString('latin1').replace(/\r\n?/g, '\n');
}
