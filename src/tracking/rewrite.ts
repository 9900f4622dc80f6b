import { Parser } from 'htmlparser2';

/** What to do with one recipient's HTML; a function left out leaves that part alone. */
export interface RewriteOptions {
  /**
   * The tracked replacement of an http(s) link (its href as the parser decoded it, entities
   * resolved once), or null to leave the link as written.
   */
  link?: (url: string) => string | null;
  /** The pixel's URL: an <img> placed before `</body>`, or appended when there is none. */
  pixel?: string;
}

/** The attribute that keeps one link as written; dropped from the copy. */
export const NOTRACK = 'data-mailsvc-notrack';
/** The links the rewriter hands to `link`: an http(s) href, spaces around it trimmed. */
export const TRACKABLE = /^https?:\/\//i;

const ESCAPED: Record<string, string> = { '&': '&amp;', '"': '&quot;', '<': '&lt;', '>': '&gt;' };
const TO_ESCAPE = /[&"<>]/g;

/** `&`, `"`, `<` and `>` escaped for a double-quoted attribute value. */
function escapeAttribute(value: string): string {
  return value.replace(TO_ESCAPE, (ch) => ESCAPED[ch]!);
}

export function openTag(name: string, attribs: Record<string, string>, selfClosing: boolean): string {
  let attrs = '';
  for (const k in attribs) {
    const v = attribs[k]!;
    attrs += v === '' ? ` ${k}` : ` ${k}="${escapeAttribute(v)}"`;
  }
  return `<${name}${attrs}${selfClosing ? ' /' : ''}>`;
}

/** How the rewriter (and whoever counts what it would rewrite) reads HTML. */
export const PARSER_OPTIONS = { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true } as const;

export const pixelTag = (url: string) => `<img src="${escapeAttribute(url)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0" />`;

/**
 * Rewrites links and adds the open pixel in one pass of a streaming HTML parser. Only the
 * opening tags of rewritten `<a>` elements change (re-serialised from their parsed attributes);
 * every other byte is copied from the input, so markup the parser would read differently from a
 * mail client is never normalised behind the sender's back. Linear in the input.
 */
export function rewriteHtml(html: string, options: RewriteOptions): string {
  const { parser, finish } = rewriter(html, options);
  parser.write(html);
  parser.end();
  return finish();
}

/**
 * `rewriteHtml` a slice of `sliceChars` at a time, with `turn` awaited between two slices: a
 * 10 MB part with 200,000 links (seconds of parsing and signing) never holds the event loop for
 * more than one slice's worth. The same result as `rewriteHtml`.
 */
export async function rewriteHtmlSliced(html: string, options: RewriteOptions, sliceChars: number, turn: () => Promise<unknown>): Promise<string> {
  const { parser, finish } = rewriter(html, options);
  for (let at = 0; at < html.length; at += sliceChars) {
    if (at > 0) await turn();
    parser.write(html.slice(at, at + sliceChars));
  }
  parser.end();
  return finish();
}

function rewriter(html: string, options: RewriteOptions): { parser: Parser; finish(): string } {
  const edits: { start: number; end: number; text: string }[] = [];
  let bodyClose = -1;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (name !== 'a') return;
        const start = parser.startIndex;
        const end = parser.endIndex + 1;
        const selfClosing = html.charCodeAt(end - 2) === 0x2f;
        if (Object.hasOwn(attribs, NOTRACK)) {
          const { [NOTRACK]: _dropped, ...rest } = attribs;
          edits.push({ start, end, text: openTag(name, rest, selfClosing) });
          return;
        }
        const href = attribs.href?.trim();
        if (!options.link || href === undefined || !TRACKABLE.test(href)) return;
        const tracked = options.link(href);
        if (tracked !== null) edits.push({ start, end, text: openTag(name, { ...attribs, href: tracked }, selfClosing) });
      },
      onclosetag(name, isImplied) {
        if (name === 'body' && !isImplied && bodyClose < 0) bodyClose = parser.startIndex;
      },
    },
    PARSER_OPTIONS,
  );
  return { parser, finish };

  function finish(): string {
    if (options.pixel !== undefined) {
      const at = bodyClose >= 0 ? bodyClose : html.length;
      edits.push({ start: at, end: at, text: pixelTag(options.pixel) });
    }
    if (edits.length === 0) return html;
    edits.sort((a, b) => a.start - b.start);
    const out: string[] = [];
    let from = 0;
    for (const e of edits) {
      out.push(html.slice(from, e.start), e.text);
      from = e.end;
    }
    out.push(html.slice(from));
    return out.join('');
  }
}
