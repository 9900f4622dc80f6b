import { randomBytes } from 'node:crypto';
import type { AddressObject, EmailAddress } from 'mailparser';
import { ServiceError } from '../core/errors.ts';
import { isNormalised, normaliseBodyText, normaliseMessage } from '../dkim/sign.ts';
import { isProblem, parseMailbox, type Mailbox } from '../messages/address.ts';
import { mimeContent } from '../messages/content.ts';
import { checkIdempotencyKey } from '../messages/idempotency.ts';
import { metadata, tags, type NormalisedMessage, type RecipientKind } from '../messages/validate.ts';
import type { Stream } from '../store/suppressions.ts';
import { headerValues } from './header-values.ts';
import { fieldValue, joinFields, splitFields, type RawField } from './headers.ts';
import { refuse } from './replies.ts';

/** Header blocks beyond this are not mail a program writes; refused before any parsing. */
export const MAX_HEADER_BYTES = 256 * 1024;
const MAX_MESSAGE_ID = 250;
/** Body bytes normalised between two turns of the event loop. */
const SLICE_BYTES = 1 << 20;
/** The blank line ending the header block, whatever the line endings. */
const BLANK_LINE = /(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)/;
export interface Submission {
  message: NormalisedMessage;
  /** `Sender:`, when given; its domain must be one the key may send from, like From's. */
  sender: Mailbox | null;
  /** `X-Mailsvc-Idempotency-Key`, when given. */
  idempotencyKey: string | null;
}

/** Fields the submitter may not send on: the envelope decides who gets the message and where bounces go. */
const isRemoved = (name: string) => name === 'bcc' || name === 'return-path' || name.startsWith('x-mailsvc-');

/** RFC 5322 §3.3 date-time, in UTC. */
const rfc5322Date = (ms: number) => new Date(ms).toUTCString().replace(/GMT$/, '+0000');

function only(fields: RawField[], name: string): string | null {
  const found = fields.filter((f) => f.name === name);
  if (found.length > 1) throw refuse('badMessage', `Message has more than one ${name} header field`);
  return found.length === 1 ? fieldValue(found[0]) : null;
}

function streamOf(value: string | null): Stream {
  if (value === null) return 'transactional';
  const stream = value.toLowerCase();
  if (stream !== 'transactional' && stream !== 'broadcast') throw refuse('badMessage', 'X-Mailsvc-Stream must be transactional or broadcast');
  return stream;
}

function idempotencyKeyOf(value: string | null): string | null {
  if (value === null) return null;
  try {
    return checkIdempotencyKey(value);
  } catch (err) {
    if (err instanceof ServiceError) throw refuse('badMessage', `X-Mailsvc-${err.message}`);
    throw err;
  }
}

/**
 * Tags and metadata given as header fields, for programs that can only speak SMTP:
 * `X-Mailsvc-Tag: name=value` (repeatable) and `X-Mailsvc-Metadata-<key>: value`, under the
 * API's rules (`tags` and `metadata` of `validateSend`), a refusal naming the field.
 */
function labelsOf(fields: RawField[]): { tags: { name: string; value: string }[]; metadata: Record<string, string> } {
  const given = fields.filter((f) => f.name === 'x-mailsvc-tag').map((f) => fieldValue(f));
  const pairs = given.map((v) => {
    const at = v.indexOf('=');
    if (at < 0) throw refuse('badMessage', 'X-Mailsvc-Tag must be name=value');
    return { name: v.slice(0, at).trim(), value: v.slice(at + 1).trim() };
  });
  const entries: Record<string, string> = {};
  for (const f of fields) {
    if (!f.name.startsWith('x-mailsvc-metadata-')) continue;
    const key = f.raw.slice('x-mailsvc-metadata-'.length, f.raw.indexOf(':')).trim();
    if (Object.hasOwn(entries, key)) throw refuse('badMessage', `Message has more than one X-Mailsvc-Metadata-${key} header field`);
    entries[key] = fieldValue(f);
  }
  const checked = <T>(field: string, check: () => T): T => {
    try {
      return check();
    } catch (err) {
      // The API's sentence names the JSON field; the header field is what the sender wrote.
      if (err instanceof ServiceError) throw refuse('badMessage', `${field}: ${err.message.replace(/^Field /, '')}`);
      throw err;
    }
  };
  return { tags: checked('X-Mailsvc-Tag', () => tags(pairs)), metadata: checked('X-Mailsvc-Metadata', () => metadata(entries)) };
}

function mailboxesOf(header: AddressObject | AddressObject[] | undefined): Mailbox[] {
  const lists = header === undefined ? [] : Array.isArray(header) ? header : [header];
  const flat = (a: EmailAddress): EmailAddress[] => (a.group ? a.group.flatMap(flat) : [a]);
  const out: Mailbox[] = [];
  for (const entry of lists.flatMap((l) => l.value).flatMap(flat)) {
    const parsed = parseMailbox(entry.address ?? '');
    if (!isProblem(parsed)) out.push({ ...parsed, name: entry.name || null });
  }
  return out;
}

/**
 * The one mailbox a `From:` or `Sender:` field holds, or a refusal naming the field. A second
 * mailbox, a group or a comment beside the address would be delivered and signed as written
 * while only the first address was checked, so the value must be exactly `addr@domain` or
 * `Name <addr@domain>` (`parseMailbox`, the API's rule: one scan, linear in the value), and
 * mailparser must read the same single address from it.
 */
function oneMailbox(fields: RawField[], name: 'from' | 'sender', parsed: AddressObject | undefined): Mailbox | null {
  const value = only(fields, name);
  if (value === null) return null;
  const label = name === 'from' ? 'From' : 'Sender';
  const strict = parseMailbox(value);
  const read = mailboxesOf(parsed);
  if (isProblem(strict) || read.length !== 1 || read[0].address.toLowerCase() !== strict.address.toLowerCase()) {
    throw refuse('badMessage', `The ${label} header field must hold exactly one mailbox: addr@domain or Name <addr@domain>`);
  }
  return { ...strict, name: read[0].name };
}

/**
 * A Message-ID for a message submitted without one: the time first, so that consecutive ones sort
 * together in the Message-ID index (a random id put each message on a page of its own, written
 * again at every commit), then random bytes so that it is unique.
 */
export const generatedMessageId = (now: number, domain: string): string =>
  `<${now.toString(36).padStart(9, '0')}.${randomBytes(9).toString('hex')}.submission@${domain}>`;

const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * The message normalised as `normaliseMessage` does (CRLF everywhere, no line over 998 octets),
 * the body one slice at a time with the event loop free in between: in one piece a 25 MB
 * message would hold it for about half a second.
 */
async function normalised(raw: Buffer): Promise<{ head: Buffer; body: Buffer }> {
  const window = raw.subarray(0, MAX_HEADER_BYTES + 4).toString('latin1');
  const blank = BLANK_LINE.exec(window);
  if (!blank && raw.length > window.length) throw refuse('badMessage', `Header block over ${MAX_HEADER_BYTES} bytes`);
  if (!blank) return { head: normaliseMessage(raw), body: Buffer.alloc(0) };
  // What programs send mostly needs nothing done: then the parts are the submitted bytes.
  if (raw.length <= SLICE_BYTES && blank[0] === '\r\n\r\n' && isNormalised(raw)) {
    return { head: raw.subarray(0, blank.index + 2), body: raw.subarray(blank.index + 4) };
  }
  const head = normaliseMessage(raw.subarray(0, blank.index));
  const rest = raw.subarray(blank.index + blank[0].length);
  const parts: Buffer[] = [];
  for (let at = 0; at < rest.length;) {
    let end = Math.min(rest.length, at + SLICE_BYTES);
    if (end < rest.length) {
      const lf = rest.indexOf(0x0a, end - 1);
      end = lf < 0 ? rest.length : lf + 1;
    }
    parts.push(Buffer.from(normaliseBodyText(rest.subarray(at, end).toString('latin1')), 'latin1'));
    at = end;
    if (at < rest.length) await turn();
  }
  const body = Buffer.concat(parts);
  const ends = body.length === 0 || body.subarray(-2).toString('latin1') === '\r\n';
  return { head, body: ends ? body : Buffer.concat([body, Buffer.from('\r\n')]) };
}

/**
 * Reads a submitted message once: its header fields are split, the ones the service owns
 * removed, `Date` and `Message-ID` added when missing, line endings normalised. The envelope
 * recipients (`rcpts`) decide who gets it; the header only tells them apart as to, cc and bcc.
 */
export async function readSubmission(raw: Buffer, rcpts: Mailbox[], now: number): Promise<Submission> {
  const { head, body } = await normalised(raw);
  if (head.length > MAX_HEADER_BYTES) throw refuse('badMessage', `Header block over ${MAX_HEADER_BYTES} bytes`);
  const fields = splitFields(head.toString('latin1').replace(/\r\n$/, ''));
  if (fields === null) throw refuse('badMessage', 'Message header is malformed: a line is neither a header field nor its continuation');

  const stream = streamOf(only(fields, 'x-mailsvc-stream'));
  const idempotencyKey = idempotencyKeyOf(only(fields, 'x-mailsvc-idempotency-key'));
  const labels = labelsOf(fields);
  if (only(fields, 'from') === null) throw refuse('badMessage', 'Message has no From header field');
  const kept = fields.filter((f) => !isRemoved(f.name));
  const added: RawField[] = [];
  if (only(kept, 'date') === null) added.push({ name: 'date', raw: `Date: ${rfc5322Date(now)}` });
  const parsed = headerValues(kept);

  const from = oneMailbox(kept, 'from', parsed.from);
  if (!from) throw refuse('badMessage', 'Message has no From header field');
  const sender = oneMailbox(kept, 'sender', parsed.sender);
  let messageId = only(kept, 'message-id') === null ? null : (parsed.messageId ?? null);
  if (messageId !== null && (messageId.length > MAX_MESSAGE_ID || /\s/.test(messageId))) {
    throw refuse('badMessage', `Message-ID must be one id of at most ${MAX_MESSAGE_ID} characters`);
  }
  if (messageId === null) {
    messageId = generatedMessageId(now, from.domain);
    added.push({ name: 'message-id', raw: `Message-ID: ${messageId}` });
  }

  const to = mailboxesOf(parsed.to);
  const cc = mailboxesOf(parsed.cc);
  const kindOf = (address: string): RecipientKind => {
    const key = address.toLowerCase();
    if (to.some((m) => m.address.toLowerCase() === key)) return 'to';
    return cc.some((m) => m.address.toLowerCase() === key) ? 'cc' : 'bcc';
  };
  const recipients = rcpts.map((r) => ({ address: r.address, domain: r.domain, kind: kindOf(r.address) }));
  const bcc = rcpts.filter((r) => kindOf(r.address) === 'bcc');

  const finalHead = Buffer.from(joinFields([...added, ...kept]), 'latin1');
  return {
    idempotencyKey,
    sender,
    message: {
      from,
      to,
      cc,
      bcc,
      replyTo: mailboxesOf(parsed.replyTo),
      subject: parsed.subject ?? '',
      content: mimeContent(Buffer.concat([finalHead, Buffer.from('\r\n'), body])),
      tags: labels.tags,
      metadata: labels.metadata,
      stream,
      scheduledAt: null,
      recipients,
      messageId,
    },
  };
}
