import { invalid } from '../core/errors.ts';
import { parseIsoWithZone } from '../core/time.ts';
import type { Stream } from '../store/suppressions.ts';
import { isProblem, parseMailbox, type Mailbox } from './address.ts';
import type { Attachment, MessageContent } from './content.ts';

export const MAX_RECIPIENTS = 50;
export const SCHEDULE_GRACE_MS = 60_000;
export const MAX_SCHEDULE_AHEAD_MS = 30 * 24 * 3600_000;

/** The body of POST /emails once its JSON types are checked. */
export interface SendInput {
  from: string;
  to: string | string[];
  /** Required unless `template` names a stored template that gives it. */
  subject?: string;
  html?: string;
  text?: string;
  cc?: string | string[];
  bcc?: string | string[];
  replyTo?: string | string[];
  reply_to?: string | string[];
  headers?: Record<string, string>;
  scheduled_at?: string;
  stream?: string;
  attachments?: { filename: string; content: string; content_type?: string }[];
  tags?: { name: string; value: string }[];
  metadata?: Record<string, string>;
  /** A stored template by id or name; `templates/` renders it into `subject`, `html` and `text`. */
  template?: string | number;
  variables?: Record<string, unknown>;
}

export type RecipientKind = 'to' | 'cc' | 'bcc';

/** A message that passed every rule, ready to be accepted. */
export interface NormalisedMessage {
  from: Mailbox;
  to: Mailbox[];
  cc: Mailbox[];
  bcc: Mailbox[];
  replyTo: Mailbox[];
  subject: string;
  /** What is sent: fields from the API, raw MIME from SMTP submission. */
  content: MessageContent;
  tags: { name: string; value: string }[];
  metadata: Record<string, string>;
  stream: Stream;
  /** Null: send now. */
  scheduledAt: number | null;
  /** Distinct recipients (case-insensitive), first mention wins. */
  recipients: { address: string; domain: string; kind: RecipientKind }[];
  /** The Message-ID submitted MIME already carries (sent as is); otherwise one is made at accept. */
  messageId?: string;
}

/** Header names the service writes itself; compared case-insensitively. */
const RESERVED_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'date',
  'message-id',
  'sender',
  'reply-to',
  'return-path',
  'dkim-signature',
  'mime-version',
  'feedback-id',
  'list-unsubscribe',
  'list-unsubscribe-post',
]);
const FIELD_NAME = /^[!-9;-~]+$/; // RFC 5322 §3.6.8: printable US-ASCII except colon
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/i;
// Checked after whitespace is removed: a class holding line breaks next to a trailing `\s*`
// backtracks quadratically over a run of newlines in a multi-megabyte body.
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const CONTENT_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i;
const TAG_NAME = /^[A-Za-z0-9_-]{1,64}$/;
export const MAX_TAGS = 10;
export const MAX_METADATA_KEYS = 20;
export const MAX_LABEL_VALUE = 256;

const list = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const hasBreak = (s: string) => /[\r\n]/.test(s);

function mailboxes(field: string, value: string | string[] | undefined): Mailbox[] {
  return list(value).map((raw) => {
    const parsed = parseMailbox(raw);
    if (isProblem(parsed)) throw invalid(`Field \`${field}\` has an invalid address ${JSON.stringify(raw.slice(0, 200))}: it ${parsed.problem}`);
    return parsed;
  });
}

function scheduledAt(value: string | undefined, now: number): number | null {
  if (value === undefined) return null;
  if (!ISO_WITH_ZONE.test(value)) {
    throw invalid('Field `scheduled_at` must be an ISO 8601 timestamp with a time zone offset, e.g. 2026-11-21T10:00:00Z');
  }
  // Date.parse rolls February 30th into March: a moment that does not exist is refused.
  const at = parseIsoWithZone(value);
  if (at === null) throw invalid('Field `scheduled_at` is not a valid date');
  if (at < now - SCHEDULE_GRACE_MS) throw invalid('Field `scheduled_at` is in the past');
  if (at > now + MAX_SCHEDULE_AHEAD_MS) throw invalid('Field `scheduled_at` is more than 30 days ahead');
  return at <= now ? null : at;
}

function headers(value: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value ?? {})) {
    if (!FIELD_NAME.test(name)) throw invalid(`Header name "${name.slice(0, 80)}" in \`headers\` is not a valid field name`);
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower) || lower.startsWith('content-') || lower.startsWith('x-mailsvc-')) {
      throw invalid(`Header \`${name}\` in \`headers\` is set by the service and cannot be given`);
    }
    if (hasBreak(v)) throw invalid(`Header \`${name}\` in \`headers\` must not contain line breaks`);
    out[name] = v;
  }
  return out;
}

function attachments(value: SendInput['attachments']): Attachment[] {
  return (value ?? []).map((a, i) => {
    const where = `\`attachments[${i}]\``;
    if (!a.filename.trim() || hasBreak(a.filename)) throw invalid(`Field ${where}.filename must be a non-empty name without line breaks`);
    const content = a.content.replace(/\s+/g, '');
    if (!BASE64.test(content)) throw invalid(`Field ${where}.content must be base64`);
    if (a.content_type !== undefined && !CONTENT_TYPE.test(a.content_type)) throw invalid(`Field ${where}.content_type must be a MIME type such as application/pdf`);
    return { filename: a.filename, content, contentType: a.content_type ?? 'application/octet-stream' };
  });
}

export function tags(value: SendInput['tags']): { name: string; value: string }[] {
  const given = value ?? [];
  if (given.length > MAX_TAGS) throw invalid(`Field \`tags\` has ${given.length} tags; at most ${MAX_TAGS}`);
  return given.map((t, i) => {
    if (!TAG_NAME.test(t.name)) throw invalid(`Field \`tags[${i}]\`.name must be 1-64 letters, digits, _ or -`);
    if (t.value.length > MAX_LABEL_VALUE) throw invalid(`Field \`tags[${i}]\`.value is longer than ${MAX_LABEL_VALUE} characters`);
    if (hasBreak(t.value)) throw invalid(`Field \`tags[${i}]\`.value must not contain line breaks`);
    return { name: t.name, value: t.value };
  });
}

export function metadata(value: SendInput['metadata']): Record<string, string> {
  const entries = Object.entries(value ?? {});
  if (entries.length > MAX_METADATA_KEYS) throw invalid(`Field \`metadata\` has ${entries.length} keys; at most ${MAX_METADATA_KEYS}`);
  const out: Record<string, string> = {};
  for (const [key, v] of entries) {
    if (!TAG_NAME.test(key)) throw invalid(`Field \`metadata\` has a key ${JSON.stringify(key.slice(0, 80))}: keys are 1-64 letters, digits, _ or -`);
    if (typeof v !== 'string') throw invalid(`Field \`metadata.${key}\` must be a string`);
    if (v.length > MAX_LABEL_VALUE) throw invalid(`Field \`metadata.${key}\` is longer than ${MAX_LABEL_VALUE} characters`);
    out[key] = v;
  }
  return out;
}

/** Every rule of POST /emails beyond JSON types; throws a 422 naming the field. */
export function validateSend(input: SendInput, now: number): NormalisedMessage {
  const [from] = mailboxes('from', input.from);
  if (input.replyTo !== undefined && input.reply_to !== undefined) throw invalid('Give `replyTo` or `reply_to`, not both');
  const to = mailboxes('to', input.to);
  if (to.length === 0) throw invalid('Field `to` must name at least one recipient');
  const cc = mailboxes('cc', input.cc);
  const bcc = mailboxes('bcc', input.bcc);
  const replyTo = mailboxes(input.replyTo !== undefined ? 'replyTo' : 'reply_to', input.replyTo ?? input.reply_to);
  if (input.subject === undefined) throw invalid('Missing required field `subject`');
  if (!input.subject.trim()) throw invalid('Field `subject` must not be empty');
  if (hasBreak(input.subject)) throw invalid('Field `subject` must not contain line breaks');
  const stream = (input.stream ?? 'transactional') as Stream;
  if (stream !== 'transactional' && stream !== 'broadcast') throw invalid('Field `stream` must be `transactional` or `broadcast`');
  const files = attachments(input.attachments);
  if (input.html === undefined && input.text === undefined && files.length === 0) {
    throw invalid('Give at least one of `html`, `text` or `attachments`');
  }

  const seen = new Set<string>();
  const recipients: NormalisedMessage['recipients'] = [];
  for (const [kind, boxes] of [
    ['to', to],
    ['cc', cc],
    ['bcc', bcc],
  ] as const) {
    for (const m of boxes) {
      const key = m.address.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      recipients.push({ address: m.address, domain: m.domain, kind });
    }
  }
  if (recipients.length > MAX_RECIPIENTS) {
    throw invalid(`Too many recipients: ${recipients.length} across \`to\`, \`cc\` and \`bcc\`; at most ${MAX_RECIPIENTS}`);
  }

  return {
    from,
    to,
    cc,
    bcc,
    replyTo,
    subject: input.subject,
    content: { kind: 'fields', html: input.html ?? null, text: input.text ?? null, headers: headers(input.headers), attachments: files },
    tags: tags(input.tags),
    metadata: metadata(input.metadata),
    stream,
    scheduledAt: scheduledAt(input.scheduled_at, now),
    recipients,
  };
}
