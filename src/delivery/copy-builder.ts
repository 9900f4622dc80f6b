import type { Clock } from '../core/ports.ts';
import type { MessageWithContent } from '../store/messages.ts';
import { TtlCache } from './cache.ts';
import { prepareMessage, recipientCopy, type DkimKey, type PreparedMessage, type RecipientParts } from './compose.ts';

/** Everything one signed copy is made from; plain data, so it can cross to a thread. */
export interface CopyJob {
  /** The stored message (its content is what the MIME is built from). */
  row: MessageWithContent;
  /** `server.hostname`, the sender id in Feedback-ID. */
  senderId: string;
  own: RecipientParts;
  /** The sending domain's active keys: one signature each. */
  keys: DkimKey[];
  /** The DKIM t= tag, from the delivery clock. */
  now: number;
  /** What rendering this copy weighed for the fair scheduler (its rewritten text parts' size); 0 or absent: light. */
  weight?: number;
}

export interface BuiltCopy {
  raw: Buffer;
  /** The message's shared MIME was built for this copy (not taken from the cache). */
  built: boolean;
}

/**
 * Builds and signs recipients' copies: the message's shared MIME once per message id (kept
 * while its recipients are being sent), then each copy. Runs on the event loop (`signingThreads`
 * 0) or inside each signing thread, with a clock of its own for the cache's time to live.
 */
export class CopyBuilder {
  private readonly prepared: TtlCache<PreparedMessage>;

  constructor(clock: Clock, maxCachedBytes: number) {
    this.prepared = new TtlCache(clock, 60_000, 1000, { weigh: (p) => p.size, maxWeight: maxCachedBytes });
  }

  async build(job: CopyJob): Promise<BuiltCopy> {
    let built = false;
    const prepared = await this.prepared.get(String(job.row.id), () => {
      built = true;
      return prepareMessage(job.row, job.senderId);
    });
    return { raw: recipientCopy(prepared, job.own, job.keys, job.now), built };
  }
}
