import Mustache from 'mustache';
import { invalid } from '../core/errors.ts';

/**
 * Stored templates (SPEC §15), rendered by mustache.js (docs/DECISIONS.md, "Templates"): its
 * parser reads the tags and its writer renders them, HTML-escaping `{{name}}` in `html`;
 * mustache.js interprets its tokens and never compiles a template to code.
 *
 * Only a linear subset is accepted: text, `{{name}}`, `{{{name}}}`/`{{& name}}` and comments.
 * Sections, inverted sections, partials and delimiter changes are refused when a template is
 * saved, so rendering is one pass over the tokens, its size known from them beforehand.
 */

export type TemplateField = 'subject' | 'html' | 'text';
export const TEMPLATE_FIELDS: readonly TemplateField[] = ['subject', 'html', 'text'];

export interface TemplateSource {
  subject: string;
  html: string | null;
  text: string | null;
}

export interface RenderedTemplate {
  subject: string;
  html: string | null;
  text: string | null;
}

/** mustache.js's token: type, value, start, end. */
type Token = [string, string, number, number];

interface Part {
  tokens: Token[];
  /** UTF-8 bytes of the text between the tags. */
  textBytes: number;
  /** Each placeholder in order, and whether it is HTML-escaped. */
  placeholders: { name: string; escaped: boolean }[];
}

export interface CompiledTemplate {
  source: TemplateSource;
  parts: Record<TemplateField, Part | null>;
  /** The placeholder names the template uses, sorted. */
  variables: string[];
}

/** The render limits: `tracking.maxRenderedBytes` (SPEC §6 caps what one message renders to). */
export interface RenderLimits {
  maxRenderedBytes: number;
}

/** RFC 5322 §2.1.1: a line is at most 998 characters; the subject is one. */
export const MAX_SUBJECT_CHARS = 998;

// One writer of our own: the default one keeps every template it ever parsed in an unbounded
// cache; compiled templates are cached by the service instead.
const writer = new Mustache.Writer();
(writer as { templateCache?: unknown }).templateCache = undefined;

const NO_ESCAPE = { escape: (value: unknown) => String(value) };
const HTML_ESCAPE = { escape: (value: unknown) => Mustache.escape(String(value)) };

/** Segments of letters, digits, `_` and `-`, joined by dots (`user.first_name`). */
const NAME = /^[\p{L}\p{N}_-]+(?:\.[\p{L}\p{N}_-]+)*$/u;
const TAG_KIND: Record<string, string> = {
  '#': 'a section',
  '^': 'an inverted section',
  '/': 'a section end',
  '>': 'a partial',
  '=': 'a delimiter change',
};
const tagText = (template: string, token: Token) => JSON.stringify(template.slice(token[2], Math.min(token[3], token[2] + 80)));

function compilePart(field: TemplateField, template: string): Part {
  let tokens: Token[];
  try {
    tokens = writer.parse(template) as Token[];
  } catch (err) {
    throw invalid(`Field \`${field}\` is not a valid template: ${(err as Error).message}`);
  }
  let textBytes = 0;
  const placeholders: Part['placeholders'] = [];
  for (const token of tokens) {
    const [type, value] = token;
    if (type === 'text') textBytes += Buffer.byteLength(value);
    else if (type === 'name' || type === '&') {
      if (!NAME.test(value)) {
        throw invalid(`Field \`${field}\` has the tag ${tagText(template, token)}: a variable name is letters, digits, _ or -, with dots between nested names`);
      }
      placeholders.push({ name: value, escaped: type === 'name' && field === 'html' });
    } else if (type !== '!') {
      throw invalid(
        `Field \`${field}\` has the tag ${tagText(template, token)}, ${TAG_KIND[type] ?? 'a tag'}: templates take only variables ({{name}}, {{{name}}}) and comments`,
      );
    }
  }
  return { tokens, textBytes, placeholders };
}

/** Parses and checks a template (422 naming the field and the tag); the result renders any number of times. */
export function compileTemplate(source: TemplateSource): CompiledTemplate {
  if (/[\r\n]/.test(source.subject)) throw invalid('Field `subject` must not contain line breaks');
  const parts: CompiledTemplate['parts'] = { subject: null, html: null, text: null };
  const names = new Set<string>();
  for (const field of TEMPLATE_FIELDS) {
    const template = source[field];
    if (template === null) continue;
    const part = compilePart(field, template);
    for (const p of part.placeholders) names.add(p.name);
    parts[field] = part;
  }
  return { source, parts, variables: [...names].sort() };
}

/**
 * A placeholder's value: own properties only, through nested objects for a dotted name, so
 * `{{constructor}}` or `{{__proto__}}` is missing rather than something of Object.prototype.
 */
function lookup(variables: Record<string, unknown>, name: string): unknown {
  let at: unknown = variables;
  for (const segment of name.split('.')) {
    if (typeof at !== 'object' || at === null || Array.isArray(at) || !Object.hasOwn(at, segment)) return undefined;
    at = (at as Record<string, unknown>)[segment];
  }
  return at;
}

/** What HTML escaping adds to a value, per character: mustache.js's table (`&amp;`, `&quot;`, `&#x2F;`, ...). */
const ESCAPE_GROWTH: Record<string, number> = { '&': 4, '<': 3, '>': 3, '"': 5, "'": 4, '/': 5, '`': 5, '=': 5 };

function escapedBytes(text: string, bytes: number): number {
  let extra = 0;
  for (let i = 0; i < text.length; i++) extra += ESCAPE_GROWTH[text[i]] ?? 0;
  return bytes + extra;
}

const tooLongSubject = () => invalid(`The subject rendered from the template is longer than ${MAX_SUBJECT_CHARS} characters`);

interface Value {
  text: string;
  bytes: number;
  escapedBytes?: number;
}

/**
 * Renders a compiled template with `variables`. Refused with 422: a placeholder whose variable
 * is missing or null, or is an object or array (named); a subject a variable would break across
 * lines; a render over `maxRenderedBytes`, counted from the tokens before anything is built, so
 * a large value used many times is refused without building the string.
 */
export function renderTemplate(compiled: CompiledTemplate, variables: Record<string, unknown>, limits: RenderLimits): RenderedTemplate {
  // Each distinct placeholder is looked up and measured once; a view holding only those, in
  // null-prototype objects, is what mustache.js renders, so its own lookup (which follows the
  // prototype chain) finds nothing else.
  const values = new Map<string, Value>();
  const view: Record<string, unknown> = Object.create(null);
  for (const name of compiled.variables) {
    const value = lookup(variables, name);
    if (value === undefined || value === null) throw invalid(`Missing template variable \`${name}\``);
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
      throw invalid(`Template variable \`${name}\` must be a string, number or boolean, not ${Array.isArray(value) ? 'an array' : 'an object'}`);
    const text = String(value);
    values.set(name, { text, bytes: Buffer.byteLength(text) });
    const segments = name.split('.');
    let node = view;
    for (const segment of segments.slice(0, -1)) node = (node[segment] ??= Object.create(null)) as Record<string, unknown>;
    node[segments[segments.length - 1]] = text;
  }

  const bytesOf = (part: Part) =>
    part.placeholders.reduce((sum, p) => {
      const v = values.get(p.name)!;
      return sum + (p.escaped ? (v.escapedBytes ??= escapedBytes(v.text, v.bytes)) : v.bytes);
    }, part.textBytes);
  const subjectPart = compiled.parts.subject!;
  const broken = subjectPart.placeholders.find((p) => /[\r\n]/.test(values.get(p.name)!.text));
  if (broken) throw invalid(`Template variable \`${broken.name}\` must not contain line breaks: it is used in the subject`);
  const subjectBytes = bytesOf(subjectPart);
  // A UTF-16 unit is at most 3 bytes of UTF-8: more bytes than that cannot fit the line.
  if (subjectBytes > 3 * MAX_SUBJECT_CHARS) throw tooLongSubject();
  const size = subjectBytes + (compiled.parts.html ? bytesOf(compiled.parts.html) : 0) + (compiled.parts.text ? bytesOf(compiled.parts.text) : 0);
  if (size > limits.maxRenderedBytes) {
    throw invalid(
      `The template renders to more than ${limits.maxRenderedBytes} bytes with these variables; at most ${limits.maxRenderedBytes} rendered bytes per message`,
    );
  }

  const context = new Mustache.Context(view);
  const render = (field: TemplateField) => {
    const part = compiled.parts[field];
    if (!part) return null;
    return writer.renderTokens(part.tokens as unknown as string[][], context, undefined, compiled.source[field]!, field === 'html' ? HTML_ESCAPE : NO_ESCAPE);
  };
  const subject = render('subject')!;
  if (subject.length > MAX_SUBJECT_CHARS) throw tooLongSubject();
  return { subject, html: render('html'), text: render('text') };
}
