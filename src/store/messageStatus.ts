import { isPg, type Statement, type Tx } from './db.ts';

/**
 * A message's status is derived from its recipients, in the database, by the one function
 * below; every repository that changes a recipient's status calls it in the same transaction.
 *
 * The rule: while any recipient is unfinished, the most advanced unfinished status (sending,
 * deferred, queued, scheduled); once all are final, `suppressed` if all are, else judged on the
 * others: all delivered → `delivered`, some → `partial`, none but some bounced → `bounced`, all
 * canceled → `canceled`, else `failed`.
 */
const count = (status: string) => `coalesce(sum(case when r.status = '${status}' then 1 else 0 end), 0)`;
const others = `(count(*) - ${count('suppressed')})`;
const DERIVED = `(select case
    when ${count('sending')} > 0 then 'sending'
    when ${count('deferred')} > 0 then 'deferred'
    when ${count('queued')} > 0 then 'queued'
    when ${count('scheduled')} > 0 then 'scheduled'
    when ${others} = 0 then 'suppressed'
    when ${count('delivered')} = ${others} then 'delivered'
    when ${count('delivered')} > 0 then 'partial'
    when ${count('bounced')} > 0 then 'bounced'
    when ${count('canceled')} = ${others} then 'canceled'
    else 'failed' end
  from recipients r where r.message_id = messages.id)`;

/**
 * Re-derives the status of these messages from their recipients. On PostgreSQL the message
 * rows are locked first (in id order) and the derivation is a later statement, so it reads
 * with a snapshot taken after the lock: of two transactions finishing the last recipients of
 * one message, the second to take the lock sees the first one's committed recipient and
 * writes the final status. SQLite's single writer gives the same order for free.
 */
/** The derived status of the `messages` row being updated, as an SQL expression. */
export const derivedStatus = (tx: Tx) => tx.raw(DERIVED);

export async function deriveMessageStatuses(tx: Tx, messageIds: Iterable<number>): Promise<void> {
  for (const chunk of chunksOf(messageIds)) {
    if (isPg(tx)) await tx('messages').whereIn('id', chunk).orderBy('id').forUpdate().select('id');
    await derivation(tx, chunk);
  }
}

/**
 * The derivation as statements not yet run, for a caller that already holds the messages' row
 * locks (taken in id order by an earlier statement of its transaction) and sends them with
 * other work.
 */
export const lockedStatusDerivations = (tx: Tx, messageIds: Iterable<number>): Statement[] => chunksOf(messageIds).map((chunk) => derivation(tx, chunk));

const derivation = (tx: Tx, ids: number[]): Statement => tx('messages').whereIn('id', ids).update({ status: derivedStatus(tx) });

/** Distinct ids in ascending order, 500 to a statement. */
function chunksOf(messageIds: Iterable<number>): number[][] {
  const ids = [...new Set(messageIds)].sort((a, b) => a - b);
  const out: number[][] = [];
  for (let i = 0; i < ids.length; i += 500) out.push(ids.slice(i, i + 500));
  return out;
}
