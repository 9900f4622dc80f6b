import { isPg, type Statement, type Tx } from './db.ts';
import { MESSAGE_STATUS_OTHERWISE, MESSAGE_STATUS_RULE, statusChangesOnMove, type RecipientStatus, type StatusClause } from '../messages/status.ts';

/**
 * A message's status is derived from its recipients, in the database, by the one expression
 * below; every repository that changes a recipient's status calls it in the same transaction.
 * The expression is the rule's table (`messages/status.ts`) written as SQL, one `when` per line:
 * a line holds when some recipient has one of its `any` statuses, or none has a status outside
 * its `only` ones (vacuously so for a message without recipients, as in the table).
 */
const quoted = (statuses: readonly string[]) => statuses.map((s) => `'${s}'`).join(', ');
// One count per status, shared by the lines that name it: the database computes each once.
const count = (status: string) => `coalesce(sum(case when r.status = '${status}' then 1 else 0 end), 0)`;
const holds = (clause: StatusClause) => ('any' in clause ? `${clause.any.map(count).join(' + ')} > 0` : `count(*) - ${clause.only.map(count).join(' - ')} = 0`);
const DERIVED = `(select case
    ${MESSAGE_STATUS_RULE.map((clause) => `when ${holds(clause)} then '${clause.then}'`).join('\n    ')}
    else '${MESSAGE_STATUS_OTHERWISE}' end
  from recipients r where r.message_id = messages.id)`;

/** The derived status of the `messages` row being updated, as an SQL expression. */
const derivedStatus = (tx: Tx) => tx.raw(DERIVED);

/**
 * For a statement that moves recipients from one of `from` to `to` and sets their messages'
 * statuses without reading the messages' other recipients: the new status of the `messages` row
 * `alias`, and the condition under which it changes, as SQL. Both come from the rule
 * (`statusChangesOnMove`), which throws if the status before does not decide it.
 */
export function statusOnMove(alias: string, from: readonly RecipientStatus[], to: RecipientStatus): { status: string; changes: string } {
  const changes = statusChangesOnMove(from, to);
  if (changes.size === 0) throw new Error(`moving ${from.join('/')} to ${to} changes no message's status`);
  const targets = [...new Set(changes.values())];
  const status = targets.length === 1 ? `'${targets[0]}'` : `case ${alias}.status ${[...changes].map(([a, b]) => `when '${a}' then '${b}'`).join(' ')} end`;
  return { status, changes: `${alias}.status in (${quoted([...changes.keys()])})` };
}

/**
 * Re-derives the status of these messages from their recipients. On PostgreSQL the message
 * rows are locked first (in id order) and the derivation is a later statement, so it reads
 * with a snapshot taken after the lock: of two transactions finishing the last recipients of
 * one message, the second to take the lock sees the first one's committed recipient and
 * writes the final status. SQLite's single writer gives the same order for free.
 */
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

const derivation = (tx: Tx, ids: number[]): Statement =>
  tx('messages')
    .whereIn('id', ids)
    .update({ status: derivedStatus(tx) });

/** Distinct ids in ascending order, 500 to a statement. */
function chunksOf(messageIds: Iterable<number>): number[][] {
  const ids = [...new Set(messageIds)].sort((a, b) => a - b);
  const out: number[][] = [];
  for (let i = 0; i < ids.length; i += 500) out.push(ids.slice(i, i + 500));
  return out;
}
