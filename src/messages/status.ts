export const RECIPIENT_STATUSES = [
  'scheduled', 'queued', 'sending', 'deferred', 'delivered', 'bounced', 'failed', 'suppressed', 'canceled',
] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

export const MESSAGE_STATUSES = [
  'scheduled', 'queued', 'sending', 'deferred', 'delivered', 'partial', 'bounced', 'failed', 'suppressed', 'canceled',
] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];
