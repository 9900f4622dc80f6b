import type { Statement, Tx } from '../store/db.ts';
import { eventsRepo } from '../store/events.ts';
import { iso } from '../core/time.ts';

export const EVENT_NAMES = ['email.delivered', 'email.bounced', 'email.opened', 'email.clicked', 'email.complained', 'email.unsubscribed'] as const;
export type EventName = (typeof EVENT_NAMES)[number];

export type BounceType = 'permanent' | 'transient' | 'blocked';

/** What the receiving side reported; `response` and `reporting_mta` are always present. */
export interface ProviderReport {
  response: string;
  reporting_mta: string;
  [extra: string]: string | number | null;
}

/** The webhook payload of the public interface, exactly as it will be sent. */
export interface EventPayload {
  event: EventName;
  occurred_at: string;
  email_id: number;
  recipient: string;
  bounce_type?: BounceType;
  url?: string;
  provider: ProviderReport;
  /** The message's tags and metadata (SPEC §15), present when it has either. */
  tags?: { name: string; value: string }[];
  metadata?: Record<string, string>;
}

export interface NewEvent {
  workspaceId: number;
  emailId: number;
  recipientId: number | null;
  event: EventName;
  recipient: string;
  bounceType?: BounceType;
  url?: string;
  provider: ProviderReport;
  at: number;
  labels?: { tags: { name: string; value: string }[]; metadata: Record<string, string> } | null;
}

const payloadOf = (e: NewEvent, occurredAt: number): EventPayload => ({
  event: e.event,
  occurred_at: iso(occurredAt),
  email_id: e.emailId,
  recipient: e.recipient,
  ...(e.bounceType ? { bounce_type: e.bounceType } : {}),
  ...(e.url ? { url: e.url } : {}),
  provider: e.provider,
  ...(e.labels ? { tags: e.labels.tags, metadata: e.labels.metadata } : {}),
});

/**
 * Records an event inside the caller's transaction, so the event, its webhook deliveries (one
 * per subscribed endpoint: the outbox) and the recipient's new status commit together.
 * `occurred_at` is unique per (email, event): a clash is bumped by 1 ms, so email_id + event +
 * occurred_at identifies one event even for many recipients.
 */
export async function recordEvent(tx: Tx, e: NewEvent): Promise<EventPayload> {
  return (await recordEvents(tx, [e]))[0]!;
}

/**
 * Many events in the caller's transaction, by the rules of `recordEvent`, in a fixed number of
 * statements (see `eventsRepo.insertMany`); payloads in input order.
 */
export async function recordEvents(tx: Tx, events: NewEvent[], options: { messagesLocked?: boolean; alongside?: Statement[] } = {}): Promise<EventPayload[]> {
  const payloads: EventPayload[] = new Array(events.length);
  await eventsRepo.insertMany(
    tx,
    events.map((e, i) => ({
      row: { workspace_id: e.workspaceId, email_id: e.emailId, recipient_id: e.recipientId, event: e.event },
      at: e.at,
      payload: (occurredAt: number) => {
        payloads[i] = payloadOf(e, occurredAt);
        return JSON.stringify(payloads[i]);
      },
    })),
    options,
  );
  return payloads;
}
