/** The API's shapes the screens read (see GET /api/v1/openapi.json). */
export interface EmailSummary {
  id: number;
  stream: string;
  status: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string;
  created_at: string;
  scheduled_at: string | null;
}

export interface EventPayload {
  event: string;
  occurred_at: string;
  email_id: number;
  recipient: string;
  bounce_type?: string;
  url?: string;
  provider?: { response?: string; reporting_mta?: string; [k: string]: unknown };
}

export interface Email extends EmailSummary {
  message_id: string | null;
  reply_to: string[];
  tags: { name: string; value: string }[];
  recipients: { address: string; status: string; attempts: number; last_response: string | null; source_address?: string | null; updated_at: string }[];
  events: EventPayload[];
}

export interface EmailContent {
  available: boolean;
  headers: { name: string; value: string }[];
  html: string | null;
  text: string | null;
  raw: string | null;
}

export interface Suppression {
  address: string;
  stream: string;
  reason: string;
  email_id: number | null;
  created_at: string;
}

export interface Webhook {
  id: number;
  url: string;
  events: string[];
  status: string;
  failure_count: number;
  last_success_at: string | null;
  secret: string;
  created_at: string;
}

/** An inbound route: mail for `match` POSTed to `url` as email.received. */
export interface Route {
  id: number;
  match: string;
  url: string;
  priority: number;
  status: string;
  failure_count: number;
  last_success_at: string | null;
  secret: string;
  created_at: string;
}

/** One POST of a received message to a route. */
export interface RouteAttempt {
  id: number;
  inbound_id: number;
  attempt: number;
  response_code: number | null;
  response_body: string | null;
  error: string | null;
  duration_ms: number;
  created_at: string;
}

export interface WebhookAttempt {
  id: number;
  event: string;
  email_id: number;
  /** The recipient the event is about; null for events about the whole message. */
  recipient: string | null;
  attempt: number;
  response_code: number | null;
  response_body: string | null;
  error: string | null;
  duration_ms: number;
  created_at: string;
}

export interface DnsRecord {
  type: string;
  name: string;
  value: string;
  priority?: number;
  purpose: string;
  required: boolean;
  verified: boolean;
}

export interface Domain {
  id: number;
  name: string;
  status: string;
  verified_by: string | null;
  selector: string;
  records: DnsRecord[];
  /** Its DKIM keys, oldest first (SPEC §13). */
  keys: DkimKey[];
  problems: string[];
  open_tracking: boolean;
  click_tracking: boolean;
  /** The sending pool its mail goes from; null: the workspace's, else the stream's, else every source address. */
  pool: string | null;
  created_at: string;
  verified_at: string | null;
}

export interface DkimKey {
  id: number;
  selector: string;
  algorithm: 'rsa-sha256' | 'ed25519-sha256';
  /** pending: not verified yet; active: signs; retiring: replaced, still published; retired. */
  status: 'pending' | 'active' | 'retiring' | 'retired';
  created_at: string;
  verified_at: string | null;
  retire_after: string | null;
}

export interface ApiKey {
  id: number;
  name: string;
  prefix: string;
  scope: string;
  created_at: string;
  revoked_at: string | null;
}

export interface DayStats {
  day: string;
  stream: string;
  sent: number;
  delivered: number;
  bounced: { permanent: number; transient: number; blocked: number };
  complained: number;
  opened: number;
  clicked: number;
  unsubscribed: number;
}

/** A destination group's waiting mail, limits and state (`GET /stats/queue`). */
export interface QueueGroup {
  group: string;
  queued: number;
  deferred: number;
  held: number;
  connections: number;
  per_minute: number | null;
  suspended_until?: string;
  reason?: string;
  on_hold: boolean;
  hold_reason?: string;
}

/** One complaint-rate figure of GET /stats/reputation: complaints ÷ delivered over 7 days, in percent. */
export interface RateFigure {
  delivered: number;
  complained: number;
  rate: number | null;
  level: 'ok' | 'warning' | 'critical';
}

export interface Reputation {
  from: string;
  to: string;
  thresholds: { warning: number; critical: number; pause_broadcast_at: number | null };
  workspace: RateFigure & { streams: (RateFigure & { stream: string })[] };
  domains: (RateFigure & { domain: string; stream: string; held?: boolean })[];
}

export interface QueueStats {
  held: number;
  scheduled: number;
  queued: number;
  sending: number;
  deferred: number;
  oldest_deferred_since: string | null;
  oldest_deferred_age_seconds: number | null;
  next_retry_at: string | null;
  groups: QueueGroup[];
}

export interface Capture {
  id: number;
  email_id: number;
  recipient: string;
  envelope: { mail_from: string; rcpt_to: string };
  message_id: string;
  subject: string;
  outcome: string;
  response: string;
  dkim: { result: string; detail: string };
  size: number;
  captured_at: string;
}

export interface SuppressionCause {
  event: string;
  occurred_at: string;
  bounce_type: string | null;
  response: string;
  reporting_mta: string;
  status: string | null;
  reason: string | null;
  decided_by: string[];
  feedback_type: string | null;
}

/** A stored template: `{{variable}}` placeholders in its subject, HTML and text. */
export interface Template {
  id: number;
  name: string;
  subject: string;
  html: string | null;
  text: string | null;
  variables: string[];
  created_at: string;
  updated_at: string;
}

export interface RenderedTemplate {
  subject: string;
  html: string | null;
  text: string | null;
}
