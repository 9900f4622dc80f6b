import { encode as base64Encode, wrap as base64Wrap } from 'nodemailer/lib/base64';
import type MimeNode from 'nodemailer/lib/mime-node';
import { encode as qpEncode, wrap as qpWrap } from 'nodemailer/lib/qp';

/** What of a node nodemailer keeps to itself that writing it needs. */
interface NodeInside {
  _raw: string | Buffer | false;
  _transforms: unknown[];
  _processFuncs: unknown[];
}

const LINE = 76;

const inside = (node: MimeNode) => node as unknown as NodeInside;

const isText = (contentType: unknown) => typeof contentType === 'string' && /^text\//i.test(contentType);

/**
 * Whether `writeMime` can write this tree: content held in memory (strings and Buffers, as a
 * stored message's always is), no stream transforms, no binary quoted-printable.
 */
export function writableInMemory(node: MimeNode): boolean {
  const { _raw: raw, _transforms: transforms, _processFuncs: processFuncs } = inside(node);
  if (transforms.length > 0 || processFuncs.length > 0 || node.newline) return false;
  if (raw !== false && typeof raw !== 'string' && !Buffer.isBuffer(raw)) return false;
  const content = node.content;
  if (content !== undefined && content !== null && typeof content !== 'string' && !Buffer.isBuffer(content)) return false;
  // Outside text/*, nodemailer's quoted-printable keeps lone CR and LF as data; its one-pass encoder does not.
  if (content && node.getTransferEncoding() === 'quoted-printable' && !isText(node.getHeader('Content-Type'))) return false;
  return node.childNodes.every(writableInMemory);
}

/**
 * The bytes nodemailer's `build()` gives for a compiled tree, written in one pass: `build()` runs
 * every node through stream pipelines (an AbortController and a DOMException with a stack trace
 * each), which cost more than the MIME itself for a message of a few kilobytes. Only for a tree
 * `writableInMemory` accepts; the encoders are nodemailer's own, and a test holds the two equal.
 */
export function writeMime(root: MimeNode): Buffer {
  const out: Buffer[] = [];
  writeNode(root, out);
  let end: number | undefined;
  for (let i = out.length - 1; end === undefined && i >= 0; i--) end = out[i]![out[i]!.length - 1];
  if (end !== 0x0a) out.push(Buffer.from(end === 0x0d ? '\n' : '\r\n', 'latin1'));
  return Buffer.concat(out);
}

function writeNode(node: MimeNode, out: Buffer[]): void {
  const raw = inside(node)._raw;
  if (raw !== false) {
    out.push(typeof raw === 'string' ? Buffer.from(raw) : raw);
    return;
  }
  const transferEncoding = node.getTransferEncoding();
  out.push(Buffer.from(`${node.buildHeaders()}\r\n\r\n`));
  const content = node.content as string | Buffer | undefined;
  if (content) {
    if (transferEncoding === 'base64') out.push(Buffer.from(base64Wrap(base64Encode(content), LINE), 'latin1'));
    else if (transferEncoding === 'quoted-printable') out.push(Buffer.from(qpWrap(qpEncode(content), LINE), 'latin1'));
    else out.push(typeof content === 'string' ? Buffer.from(content) : content);
  }
  if (!node.multipart) return;
  node.childNodes.forEach((child, i) => {
    out.push(Buffer.from(`${i > 0 ? '\r\n' : ''}--${node.boundary}\r\n`));
    writeNode(child, out);
  });
  out.push(Buffer.from(`\r\n--${node.boundary}--\r\n`));
}
