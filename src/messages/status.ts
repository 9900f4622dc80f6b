export const RECIPIENT_STATUSES = ['held', 'scheduled', 'queued', 'sending', 'deferred', 'delivered', 'bounced', 'failed', 'suppressed', 'canceled'] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

/** Recipient statuses not final yet, least advanced first (the order of the rule below). */
export const UNFINISHED_STATUSES = ['held', 'scheduled', 'queued', 'deferred', 'sending'] as const satisfies readonly RecipientStatus[];

export const MESSAGE_STATUSES = ['held', 'scheduled', 'queued', 'sending', 'deferred', 'delivered', 'partial', 'bounced', 'failed', 'suppressed', 'canceled'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/**
 * One line of the rule: the message takes `then` when some recipient has one of `any`, or when
 * every recipient has one of `only`. A line depends only on which statuses are present, never on
 * how many recipients have each, so neither does the rule.
 */
export type StatusClause = { then: MessageStatus } & ({ any: readonly RecipientStatus[] } | { only: readonly RecipientStatus[] });

/**
 * A message's status, derived from its recipients' (SPEC §3): the first line that holds, else
 * `MESSAGE_STATUS_OTHERWISE`. While any recipient is unfinished, the most advanced unfinished
 * status; once all are final, `suppressed` if all are, else judged on the others: all delivered,
 * some delivered, none but some bounced, all canceled, else failed. This table is the one
 * encoding: the database's derivation (`store/messageStatus.ts`), a new message's status and the
 * claim statements (`store/queue.ts`) are built from it.
 */
export const MESSAGE_STATUS_RULE: readonly StatusClause[] = [
  { any: ['sending'], then: 'sending' },
  { any: ['deferred'], then: 'deferred' },
  { any: ['queued'], then: 'queued' },
  { any: ['scheduled'], then: 'scheduled' },
  // Held by an operator (queue control, SPEC §11): the least advanced unfinished status, never final.
  { any: ['held'], then: 'held' },
  { only: ['suppressed'], then: 'suppressed' },
  { only: ['delivered', 'suppressed'], then: 'delivered' },
  { any: ['delivered'], then: 'partial' },
  { any: ['bounced'], then: 'bounced' },
  { only: ['canceled', 'suppressed'], then: 'canceled' },
];
export const MESSAGE_STATUS_OTHERWISE: MessageStatus = 'failed';

/** The status of a message whose recipients have these statuses (none: `suppressed`, as in the database). */
export function messageStatusOf(statuses: Iterable<RecipientStatus>): MessageStatus {
  const present = new Set(statuses);
  for (const clause of MESSAGE_STATUS_RULE) {
    if ('any' in clause ? clause.any.some((s) => present.has(s)) : [...present].every((s) => clause.only.includes(s))) return clause.then;
  }
  return MESSAGE_STATUS_OTHERWISE;
}

/**
 * What a message's status becomes when some of its recipients (at least one) move from one of
 * `from` to `to`, as a map from its status before to its status after, listing only those that
 * change. Found by trying every set of recipient statuses the message may have had and every
 * set of them the move may have emptied; throws when the status before does not decide the one
 * after. It lets a statement that moves recipients set their messages' statuses without reading
 * the messages' other recipients again.
 */
export function statusChangesOnMove(from: readonly RecipientStatus[], to: RecipientStatus): Map<MessageStatus, MessageStatus> {
  const after = new Map<MessageStatus, MessageStatus>();
  for (const before of subsets(RECIPIENT_STATUSES)) {
    const moved = before.filter((s) => from.includes(s));
    if (moved.length === 0) continue;
    const old = messageStatusOf(before);
    for (const emptied of subsets(moved)) {
      const now = messageStatusOf([...before.filter((s) => !emptied.includes(s)), to]);
      const seen = after.get(old);
      if (seen !== undefined && seen !== now) throw new Error(`moving ${from.join('/')} to ${to}: a ${old} message may become ${seen} or ${now}`);
      after.set(old, now);
    }
  }
  for (const [old, now] of after) if (old === now) after.delete(old);
  return after;
}

function subsets<T>(items: readonly T[]): T[][] {
  return items.reduce<T[][]>((out, item) => out.concat(out.map((s) => [...s, item])), [[]]);
}
