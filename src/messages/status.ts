export const RECIPIENT_STATUSES = [
  'scheduled', 'queued', 'sending', 'deferred', 'delivered', 'bounced', 'failed', 'suppressed', 'canceled',
] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

export const MESSAGE_STATUSES = [
  'scheduled', 'queued', 'sending', 'deferred', 'delivered', 'partial', 'bounced', 'failed', 'suppressed', 'canceled',
] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** Unfinished statuses, least advanced first. */
const UNFINISHED: RecipientStatus[] = ['scheduled', 'queued', 'deferred', 'sending'];

/**
 * While any recipient is unfinished, the most advanced unfinished status; once all
 * are final, `suppressed` if all are, else judged on the others: all delivered → `delivered`,
 * some → `partial`, none but some bounced → `bounced`, all canceled → `canceled`, else `failed`.
 */
export function deriveMessageStatus(statuses: RecipientStatus[]): MessageStatus {
  const unfinished = statuses.filter((s) => UNFINISHED.includes(s));
  if (unfinished.length > 0) {
    return unfinished.reduce((a, b) => (UNFINISHED.indexOf(b) > UNFINISHED.indexOf(a) ? b : a));
  }
  const others = statuses.filter((s) => s !== 'suppressed');
  if (others.length === 0) return 'suppressed';
  const delivered = others.filter((s) => s === 'delivered').length;
  if (delivered === others.length) return 'delivered';
  if (delivered > 0) return 'partial';
  if (others.some((s) => s === 'bounced')) return 'bounced';
  if (others.every((s) => s === 'canceled')) return 'canceled';
  return 'failed';
}
