import type { Db } from '../store/db.ts';
import { inboundRepo } from '../store/inbound.ts';
import { sandboxRepo } from '../store/sandbox.ts';

/** Message statuses after which nothing will read the body again. */
const FINAL = ['delivered', 'partial', 'bounced', 'failed', 'suppressed', 'canceled'];

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
  const bodies = await inBatches(() =>
    db('messages')
      .whereIn('id', db('messages').select('id').where('created_at', '<', cutoff).whereNotNull('content').whereIn('status', FINAL).limit(BATCH))
      .update({ content: null }),
  );
  const events = await inBatches(() =>
    db('events').whereIn('id', db('events').select('id').where('occurred_at', '<', cutoff).limit(BATCH)).delete(),
  );
  // Stored inbound reports hold whole messages too.
  const inboundReports = await inboundRepo.prune(db, cutoff);
  const sandboxCaptures = await sandboxRepo.prune(db, cutoff);
  return { messageBodies: bodies, events, inboundReports, sandboxCaptures };
}
