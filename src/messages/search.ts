import { invalid } from '../core/errors.ts';
import { parseIsoWithZone } from '../core/time.ts';
import type { LabelFilter, MessageSearch } from '../store/messages.ts';
import { isProblem, parseMailbox } from './address.ts';
import { MAX_LABEL_VALUE, MAX_METADATA_KEYS, MAX_TAGS } from './validate.ts';

/** The search parameters of `GET /emails` (SPEC §15), as the query string gives them. */
export interface SearchQuery {
  from?: string;
  subject?: string;
  tag?: string | string[];
  created_after?: string;
  created_before?: string;
  /** `metadata.KEY` parameters, the prefix included. */
  [param: `metadata.${string}`]: unknown;
}

export const METADATA_PARAM = /^metadata\./;
const LABEL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
function timestamp(param: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const at = parseIsoWithZone(value);
  if (at === null) throw invalid(`Query parameter \`${param}\` must be an ISO 8601 timestamp with a time zone offset, e.g. 2026-11-21T10:00:00Z`);
  return at;
}

function labelValue(param: string, value: string): string {
  if (value.length > MAX_LABEL_VALUE) throw invalid(`Query parameter \`${param}\` has a value longer than ${MAX_LABEL_VALUE} characters`);
  return value;
}

/** `name` (any value) or `name:value`, split at the first colon: names have none. */
function tagFilter(raw: string): LabelFilter {
  const colon = raw.indexOf(':');
  const name = colon < 0 ? raw : raw.slice(0, colon);
  if (!LABEL_NAME.test(name)) throw invalid('Query parameter `tag` must be `name` or `name:value`, the name 1-64 letters, digits, _ or -');
  return colon < 0 ? { kind: 'tag_name', name, value: '' } : { kind: 'tag', name, value: labelValue('tag', raw.slice(colon + 1)) };
}

/**
 * The search filters of a `GET /emails` query, or a 422 naming the parameter. They combine with
 * AND: every `tag` given must match (a message has at most 10), and every `metadata.KEY`.
 */
export function searchFilter(q: SearchQuery): MessageSearch {
  const out: MessageSearch = {};
  if (q.from !== undefined) {
    const parsed = parseMailbox(q.from.trim());
    if (isProblem(parsed)) throw invalid(`Query parameter \`from\` must be an address: it ${parsed.problem}`);
    out.from = parsed.address.toLowerCase();
  }
  if (q.subject !== undefined) {
    if (q.subject === '') throw invalid('Query parameter `subject` must not be empty');
    out.subject = q.subject;
  }
  const tags = q.tag === undefined ? [] : Array.isArray(q.tag) ? q.tag : [q.tag];
  if (tags.length > MAX_TAGS) throw invalid(`Query parameter \`tag\` is given ${tags.length} times; at most ${MAX_TAGS}`);
  const labels = tags.map(tagFilter);
  const metadata = Object.keys(q).filter((k) => METADATA_PARAM.test(k));
  if (metadata.length > MAX_METADATA_KEYS) throw invalid(`${metadata.length} \`metadata.KEY\` query parameters; at most ${MAX_METADATA_KEYS}`);
  for (const param of metadata) {
    const name = param.slice('metadata.'.length);
    if (!LABEL_NAME.test(name)) throw invalid(`Query parameter \`${param.slice(0, 80)}\`: metadata keys are 1-64 letters, digits, _ or -`);
    const value = q[param as `metadata.${string}`];
    if (typeof value !== 'string') throw invalid(`Query parameter \`${param}\` must be given once`);
    labels.push({ kind: 'metadata', name, value: labelValue(param, value) });
  }
  if (labels.length > 0) out.labels = labels;
  const after = timestamp('created_after', q.created_after);
  const before = timestamp('created_before', q.created_before);
  if (after !== undefined) out.createdAfter = after;
  if (before !== undefined) out.createdBefore = before;
  return out;
}

/** The rows `message_labels` holds for a message: one per tag, one per distinct tag name, one per metadata key. */
export function labelsOf(tags: { name: string; value: string }[], metadata: Record<string, string>): LabelFilter[] {
  const seen = new Set<string>();
  const out: LabelFilter[] = [];
  const add = (label: LabelFilter) => {
    const key = `${label.kind}\n${label.name}\n${label.value}`;
    if (!seen.has(key)) out.push(label);
    seen.add(key);
  };
  for (const t of tags) {
    add({ kind: 'tag', name: t.name, value: t.value });
    add({ kind: 'tag_name', name: t.name, value: '' });
  }
  for (const [name, value] of Object.entries(metadata)) add({ kind: 'metadata', name, value });
  return out;
}
