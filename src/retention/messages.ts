import type { Db } from '../store/db.ts';
import { eventsRepo } from '../store/events.ts';
import { inboundMessagesRepo } from '../store/inboundMessages.ts';
import { inboundRepo } from '../store/inbound.ts';
import { messagesRepo } from '../store/messages.ts';
import { sandboxRepo } from '../store/sandbox.ts';

/** Rows per statement: SQLite has one writer, so each batch is a short transaction of its own. */
const BATCH = 1000;

async function inBatches(run: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await run();
    total += n;
    if (n < BATCH) return total;
  }
}

/**
 * Retention: after `days`, a finished message keeps its metadata (status, recipients,
 * subject, for the API's history) but loses its body, and its events (the webhook outbox) go.
 * A message still in the queue keeps its body whatever its age, or it could not be sent. Raw
 * inbound reports and the sandbox inbox's captures go after the same time.
 */
export async function pruneRetained(db: Db, now: number, days: number) {
  const cutoff = now - days * 86_400_000;
  const bodies = await inBatches(() => messagesRepo.pruneBodies(db, cutoff, BATCH));
  const events = await inBatches(() => eventsRepo.prune(db, cutoff, BATCH));
  // Stored inbound reports hold whole messages too.
  const inboundReports = await inboundRepo.prune(db, cutoff);
  // And messages received for routes (SPEC §14), raw bytes and all.
  const inboundMessages = await inboundMessagesRepo.prune(db, cutoff);
  const sandboxCaptures = await sandboxRepo.prune(db, cutoff);
  return { messageBodies: bodies, events, inboundReports, inboundMessages, sandboxCaptures };
}
