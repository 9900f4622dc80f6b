import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

const require = createRequire(import.meta.url);

/** One registry per service instance (tests build several in one process). */
export function createMetrics() {
  // Loaded on first use: CLI commands never read metrics and should not pay for loading them.
  const { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } = require('prom-client') as typeof PromClient;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'mailsvc_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'mailsvc_http_requests_total',
      help: 'HTTP requests by method, route and status code',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'mailsvc_http_request_duration_seconds',
      help: 'HTTP request duration by route',
      labelNames: ['method', 'route'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    httpDiscarded: new Counter({
      name: 'mailsvc_http_discarded_body_bytes_total',
      help: 'Bytes of request bodies read and thrown away after an answer sent before them (a 413 over http.bodyLimit), so that the client can read it',
      registers: [registry],
    }),
    httpLingering: new Gauge({
      name: 'mailsvc_http_lingering_connections',
      help: 'Connections reading and throwing away the rest of a body after an answer sent before it, until it ends or a bound is reached',
      registers: [registry],
    }),
    inboundReports: new Counter({
      name: 'mailsvc_inbound_reports_total',
      help: 'Reports received by the inbound listener, by kind and outcome (applied, duplicate, no_effect, uncorrelated, unparsed)',
      labelNames: ['kind', 'outcome'] as const,
      registers: [registry],
    }),
    inboundUnparsed: new Counter({
      name: 'mailsvc_inbound_reports_unparsed_total',
      help: 'Inbound messages stored without being parsed, by reason (time_budget, worker_failed)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    inboundTruncated: new Counter({
      name: 'mailsvc_inbound_reports_truncated_total',
      help: 'Inbound reports whose raw bytes were stored cut, by bound (max_size, unproven: 256 KB without proof)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    inboundNotStored: new Counter({
      name: 'mailsvc_inbound_reports_not_stored_total',
      help: 'Inbound reports whose raw bytes were not stored at all, by reason (ip_daily_cap)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    inboundRefusals: new Counter({
      name: 'mailsvc_inbound_refusals_total',
      help: 'SMTP commands the inbound listener refused, by reason',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    deliveryOutcomes: new Counter({
      name: 'mailsvc_delivery_outcomes_total',
      help: 'Delivery attempts by outcome (delivered, bounced, deferred, failed, lease_lost) and bounce type',
      labelNames: ['outcome', 'bounce_type'] as const,
      registers: [registry],
    }),
    deliveryDuration: new Histogram({
      name: 'mailsvc_delivery_attempt_duration_seconds',
      help: 'One recipient from claim to recorded outcome: render, sign, MX lookup, SMTP transaction, commit',
      labelNames: ['outcome'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    deliveryMessageBuilds: new Counter({
      name: 'mailsvc_delivery_message_builds_total',
      help: 'Messages whose shared MIME was built (once for all recipients while it stays cached)',
      registers: [registry],
    }),
    deliverySignatures: new Counter({
      name: 'mailsvc_delivery_dkim_signatures_total',
      help: 'Recipient copies DKIM-signed (after their destination resolved, so never for mail that cannot leave)',
      registers: [registry],
    }),
    deliveryInFlight: new Gauge({
      name: 'mailsvc_delivery_in_flight',
      help: 'Recipients claimed by this process and not yet recorded',
      registers: [registry],
    }),
    deliveryQueue: new Gauge({
      name: 'mailsvc_delivery_queue_recipients',
      help: 'Unfinished recipients in the shared queue by status (sampled by the delivery role)',
      labelNames: ['status'] as const,
      registers: [registry],
    }),
    deliveryConnections: new Gauge({
      name: 'mailsvc_delivery_smtp_connections',
      help: 'Outbound SMTP connections open in this process',
      registers: [registry],
    }),
    shapingReplies: new Counter({
      name: 'mailsvc_shaping_replies_total',
      help: 'Replies that matched a shaping rule, by destination group and action (suspend, throttle, reconnect-later)',
      labelNames: ['group', 'action'] as const,
      registers: [registry],
    }),
    shapingSuspended: new Gauge({
      name: 'mailsvc_shaping_group_suspended_until_seconds',
      help: 'Destination groups suspended now: when each resumes (Unix seconds); absent when not suspended',
      labelNames: ['group'] as const,
      registers: [registry],
    }),
    shapingThrottled: new Gauge({
      name: 'mailsvc_shaping_group_throttled_until_seconds',
      help: 'Destination groups at half rate now: when each is back to its limits (Unix seconds)',
      labelNames: ['group'] as const,
      registers: [registry],
    }),
    sourceAddressOut: new Gauge({
      name: 'mailsvc_delivery_source_address_out_until_seconds',
      help: 'Sending addresses out of their pools now (a blocklist reply, failing connections): when each returns (Unix seconds)',
      labelNames: ['address'] as const,
      registers: [registry],
    }),
    shapingDeferred: new Counter({
      name: 'mailsvc_shaping_deferred_total',
      help: 'Recipients put back without an attempt counted, by reason (suspended, paced, reply, address, warmup, held)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    complaintRate: new Gauge({
      name: 'mailsvc_complaint_rate_percent',
      help: 'Complaints per delivered recipient over the last 7 days in percent, per workspace, sending domain and stream with mail delivered in that time (computed once a minute by the delivery role)',
      labelNames: ['workspace', 'domain', 'stream'] as const,
      registers: [registry],
    }),
    webhookAttempts: new Counter({
      name: 'mailsvc_webhook_attempts_total',
      help: 'Webhook POSTs by outcome (delivered, failed, gave_up, lease_lost)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    webhookBacklog: new Gauge({
      name: 'mailsvc_webhook_backlog_deliveries',
      help: 'Pending webhook deliveries by the status of their endpoint (sampled by the webhooks role)',
      labelNames: ['endpoint_status'] as const,
      registers: [registry],
    }),
    webhookLatency: new Histogram({
      name: 'mailsvc_webhook_delivery_latency_seconds',
      help: 'From an event being recorded to its webhook being answered 2xx, retries included',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 300, 1800, 7200, 86400],
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
