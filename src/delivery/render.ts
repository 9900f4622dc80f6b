import type { TokenCodec } from '../tokens/index.ts';
import type { PreparedMessage, RecipientParts } from './compose.ts';

/** What the render step knows about one recipient's copy beyond the prepared message. */
export interface RenderContext {
  /** The sending domain's switches: off means no pixel, no rewritten link, no event. */
  tracking: { open: boolean; click: boolean };
  /** The recipient row's id is what tracking and unsubscribe tokens carry. */
  recipient: { id: number; address: string };
  /** Broadcast mail gets List-Unsubscribe and `{{unsubscribe_url}}`; transactional does not. */
  stream: 'transactional' | 'broadcast';
}

/**
 * The per-recipient render step, run on the prepared message before signing: it returns only
 * what differs for this recipient (its HTML with tracked links, `{{unsubscribe_url}}` filled in,
 * List-Unsubscribe headers on broadcast mail).
 */
export type RenderStep = (prepared: PreparedMessage, ctx: RenderContext) => RecipientParts | Promise<RecipientParts>;

/** Every recipient gets the shared parts. */
export const sendAsPrepared: RenderStep = () => ({});

export interface RenderDeps {
  /** Signed-token codecs, one per purpose (`unsubscribe`, and tracking's own). */
  tokens: Record<string, TokenCodec>;
  /** `tracking.baseUrl`: where `/t/...` links point. */
  baseUrl: string;
}

/**
 * The render step the delivery role runs. Tracking (link and pixel rewriting) and the broadcast
 * unsubscribe headers plug in here, from `deps` and the context; until they do, every recipient
 * gets the shared parts.
 */
export function createRenderStep(deps: RenderDeps): RenderStep {
  void deps;
  return sendAsPrepared;
}
