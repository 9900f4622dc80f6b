import { Parser } from 'htmlparser2';
import { invalid } from '../core/errors.ts';
import type { MessageContent } from '../messages/content.ts';
import { MAX_KID_BYTES, MAX_TOKEN_CHARS, tokenLength } from '../tokens/index.ts';
import { NOTRACK, openTag, PARSER_OPTIONS, pixelTag, TRACKABLE } from './rewrite.ts';

/** `tracking.maxLinksPerMessage` and `tracking.maxRenderedBytes`, and where the links point. */
export interface RenderBounds {
  maxLinks: number;
  maxRenderedBytes: number;
  /** `tracking.baseUrl`: tracked links are `<base>/t/c/<token>`, links to `<base>/t/` stay. */
  baseUrl: string;
}

/** What the render step writes into `{{unsubscribe_url}}` on broadcast mail, as delivery/render.ts fills it. */
const PLACEHOLDER = '{{unsubscribe_url}}';
/** A recipient id as the click payload carries it: at most 7 bytes for a safe integer, one more to be safe. */
const WORST_ID_BYTES = 8;
/** HTML parsed between two turns of the event loop: a 10 MB body never holds it in one piece. */
const SLICE_CHARS = 64 * 1024;

const turn = () => new Promise((resolve) => setImmediate(resolve));

function occurrences(text: string, of: string): number {
  let n = 0;
  for (let at = text.indexOf(of); at >= 0; at = text.indexOf(of, at + of.length)) n++;
  return n;
}

/**
 * Refuses (422, naming the cap) a message whose per-recipient render would be too big: more
 * links than `maxLinks` that click tracking would rewrite, or a rendered copy (tracked links,
 * the open pixel, unsubscribe URLs filled in) over `maxRenderedBytes`. Counted whether or not
 * the domain tracks now: its switch may be turned on before the message is sent (a scheduled
 * message waits up to 30 days), and the cap must hold when it is rendered. Links are read the
 * way `rewriteHtml` reads them (same parser, same rules), in one linear pass that yields to the
 * event loop between slices and stops at the first cap crossed. Submitted MIME is sent as
 * submitted, never rendered: nothing to count.
 */
export async function checkRenderBounds(content: MessageContent, bounds: RenderBounds): Promise<void> {
  if (content.kind !== 'fields') return;
  const base = bounds.baseUrl.replace(/\/+$/, '');
  const ours = `${base}/t/`;
  // The longest unsubscribe URL a recipient can get: `<base>/t/u/<token of an 8-byte id>`.
  const unsubscribeUrl = `${base}/t/u/`.length + tokenLength(WORST_ID_BYTES, MAX_KID_BYTES);
  const growth = (text: string | null) => (text === null ? 0 : occurrences(text, PLACEHOLDER) * Math.max(0, unsubscribeUrl - PLACEHOLDER.length));
  let size = (content.text === null ? 0 : Buffer.byteLength(content.text)) + growth(content.text);
  const html = content.html;
  if (html !== null) size += Buffer.byteLength(html) + growth(html) + pixelTag(`${base}/t/o/${'x'.repeat(tokenLength(WORST_ID_BYTES, MAX_KID_BYTES))}`).length;
  tooBig(size, bounds);
  if (html === null) return;
  if (withinBoundsUnread(html, size, base, bounds)) return;

  let links = 0;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (name !== 'a' || Object.hasOwn(attribs, NOTRACK)) return;
        const href = attribs.href?.trim();
        if (href === undefined || !TRACKABLE.test(href) || href.startsWith(ours)) return;
        const token = tokenLength(1 + WORST_ID_BYTES + Buffer.byteLength(href), MAX_KID_BYTES);
        // A URL too long for a token stays as written (see clickSigner): not tracked.
        if (token > MAX_TOKEN_CHARS) return;
        links++;
        const written = parser.endIndex + 1 - parser.startIndex;
        size += openTag(name, { ...attribs, href: `${base}/t/c/${'x'.repeat(token)}` }, false).length + 2 - written;
      },
    },
    PARSER_OPTIONS,
  );
  const check = () => {
    if (links > bounds.maxLinks) {
      throw invalid(`Field \`html\` has more than ${bounds.maxLinks} links that click tracking would rewrite; at most ${bounds.maxLinks} tracked links per message`);
    }
    tooBig(size, bounds);
  };
  for (let at = 0; at < html.length; at += SLICE_CHARS) {
    parser.write(html.slice(at, at + SLICE_CHARS));
    check();
    if (at + SLICE_CHARS < html.length) await turn();
  }
  parser.end();
  check();
}

/**
 * Whether the HTML is within both caps whatever its links turn out to be, so that it need not
 * be parsed (most mail: a few links in a few kilobytes). Every `a` tag the parser can report
 * starts with `<a` (any case), which bounds the links. A rewritten tag is at most its attributes
 * re-escaped (each character 6 at most, `&quot;`), plus the tracked URL, whose token grows 1.6
 * characters for each byte of the link (up to 3 per character), so each tag grows by less than
 * 12 times its own length plus a fixed part; the tags do not overlap.
 */
function withinBoundsUnread(html: string, size: number, base: string, bounds: RenderBounds): boolean {
  const tags = occurrencesIgnoringCase(html, '<a');
  if (tags > bounds.maxLinks) return false;
  const perLink = `${base}/t/c/`.length + tokenLength(1 + WORST_ID_BYTES, MAX_KID_BYTES) + 2;
  return size + 12 * html.length + tags * perLink <= bounds.maxRenderedBytes;
}

function occurrencesIgnoringCase(text: string, of: string): number {
  return occurrences(text, of) + occurrences(text, of.toUpperCase());
}

function tooBig(size: number, bounds: RenderBounds): void {
  if (size <= bounds.maxRenderedBytes) return;
  throw invalid(
    `Message too large once rendered: over ${bounds.maxRenderedBytes} bytes with tracked links, the open pixel and unsubscribe URLs filled in; at most ${bounds.maxRenderedBytes} rendered bytes per message`,
  );
}
