import { rewriteHtml, rewriteHtmlSliced, type RewriteOptions } from '../tracking/rewrite.ts';
import { clickSigner, type TrackingCodecs } from '../tracking/tokens.ts';
import type { RecipientParts } from './compose.ts';

/** What the render step knows about one recipient's copy beyond the prepared message. */
export interface RenderContext {
  /** The sending domain's switches: off means no pixel, no rewritten link, no event. */
  tracking: { open: boolean; click: boolean };
  /** The recipient row's id is what tracking and unsubscribe tokens carry. */
  recipient: { id: number; address: string };
  /** Broadcast mail gets List-Unsubscribe and `{{unsubscribe_url}}`; transactional does not. */
  stream: 'transactional' | 'broadcast';
  /** The sending domain's return-path domain, where the mailto unsubscribe address lives. */
  returnPathDomain: string;
}

/** What a render step starts from: the message's stored text parts (null: none, or submitted MIME). */
export interface RenderSource {
  html: string | null;
  text: string | null;
}

/**
 * The per-recipient render step, run on the prepared message before signing: it returns only
 * what differs for this recipient (its HTML with tracked links, `{{unsubscribe_url}}` filled in,
 * List-Unsubscribe headers on broadcast mail).
 */
export type RenderStep = (prepared: RenderSource, ctx: RenderContext) => RecipientParts | Promise<RecipientParts>;

/** Every recipient gets the shared parts. */
export const sendAsPrepared: RenderStep = () => ({});

export interface RenderDeps {
  /** Signed-token codecs, one per purpose. */
  tokens: TrackingCodecs;
  /** `tracking.baseUrl`: where `/t/...` links point. */
  baseUrl: string;
}

/**
 * HTML rewritten between two turns of the event loop: under 10 ms of parsing and signing with a
 * link every 50 bytes (a 10 MB part with 200,000 links takes about 4 s in all).
 */
const SLICE_CHARS = 16 * 1024;
const turn = () => new Promise((resolve) => setImmediate(resolve));

export const UNSUBSCRIBE_PLACEHOLDER = '{{unsubscribe_url}}';

const fill = (content: string | null, value: string): string | null =>
  content === null || !content.includes(UNSUBSCRIBE_PLACEHOLDER) ? content : content.split(UNSUBSCRIBE_PLACEHOLDER).join(value);

/**
 * The render step the delivery role runs: on broadcast mail the List-Unsubscribe pair (RFC
 * 8058) and `{{unsubscribe_url}}`; then, where the domain turned them on, tracked links and the
 * open pixel in the HTML part. Text parts only ever get the unsubscribe URL.
 */
export function createRenderStep(deps: RenderDeps): RenderStep {
  const base = deps.baseUrl.replace(/\/+$/, '');
  const ours = `${base}/t/`;
  return (prepared, ctx) => {
    const own: RecipientParts = {};
    let { html, text } = prepared;
    if (ctx.stream === 'broadcast') {
      const token = deps.tokens.unsubscribe.signId(ctx.recipient.id);
      const url = `${base}/t/u/${token}`;
      own.headers = {
        'List-Unsubscribe': `<${url}>, <mailto:u+${token}@${ctx.returnPathDomain}>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      };
      html = fill(html, url.replaceAll('&', '&amp;').replaceAll('"', '&quot;'));
      text = fill(text, url);
    }
    const { open, click } = ctx.tracking;
    if (html !== null && (open || click)) {
      const id = ctx.recipient.id;
      const signClick = clickSigner(deps.tokens.click, id);
      const options: RewriteOptions = {
        // Links to our own /t/ routes (the unsubscribe URL) are not wrapped in a redirect.
        link: click ? (url) => (url.startsWith(ours) ? null : tracked(signClick(url))) : undefined,
        pixel: open ? `${base}/t/o/${deps.tokens.open.signId(id)}` : undefined,
      };
      // Most HTML is rewritten in one go; a big part a slice at a time, the event loop free between.
      if (html.length <= SLICE_CHARS) html = rewriteHtml(html, options);
      else return rewriteHtmlSliced(html, options, SLICE_CHARS, turn).then((rewritten) => result(rewritten, text));
    }
    return result(html, text);

    function result(html: string | null, text: string | null): RecipientParts {
      if (html !== prepared.html && html !== null) own.html = html;
      if (text !== prepared.text && text !== null) own.text = text;
      return own;
    }
  };

  function tracked(token: string | null): string | null {
    return token === null ? null : `${base}/t/c/${token}`;
  }
}
