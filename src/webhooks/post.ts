import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { Config } from '../config/schema.ts';
import type { Clock } from '../core/ports.ts';
import { isRefusedAddress, parseWebhookUrl, policyLookup, RefusedAddressError, webhookReach, type HostResolver, type Reach } from './address-policy.ts';

/** The signature header's value: HMAC-SHA256 of the exact body, keyed by the whole secret. */
export const signature = (secret: string, body: string): string => `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;

/**
 * The Standard Webhooks key of a secret: the standard serialises a key as `whsec_` + base64, and
 * ours are `whsec_` + 32 base62 characters, all of them base64 digits, so the same string is
 * read as the 24 bytes those 32 digits decode to. Any Standard Webhooks library takes it as is.
 */
export const standardKey = (secret: string): Buffer => Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');

/**
 * `webhook-signature` (Standard Webhooks 1.0): `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`.
 * The timestamp is the attempt's, so a captured request stops verifying once the receiver's
 * tolerance (5 minutes, docs/WEBHOOKS.md) has passed; the body-only `X-Service-Signature` cannot.
 */
export const standardSignature = (secret: string, id: string, timestamp: number, body: string): string =>
  `v1,${createHmac('sha256', standardKey(secret)).update(`${id}.${timestamp}.`, 'utf8').update(body, 'utf8').digest('base64')}`;

/** The `webhook-id` of an event: the same for every attempt and replay of it, to deduplicate on. */
export const webhookId = (eventId: number): string => `evt_${eventId}`;

/** The `webhook-id` of a delivery: its event's, or for a route's delivery of a received message, its own. */
export const deliveryWebhookId = (d: { id: number; event_id: number | null }): string => (d.event_id === null ? `rcv_${d.id}` : webhookId(d.event_id));

/** The part of a receiver's answer the delivery log keeps. */
export const RESPONSE_BODY_LIMIT = 4096;

export interface PostResult {
  ok: boolean;
  status: number | null;
  body: string | null;
  error: string | null;
  durationMs: number;
  /** Not sent at all: the address policy refused the host (`error` says which address and why). */
  refused?: true;
}

/**
 * POSTs signed payloads. Keep-alive agents whose `lookup` applies the address policy on every
 * new connection; redirects are answers like any other (never followed); a request is given up
 * after `timeoutMs` whatever it is waiting for.
 */
export class WebhookPoster {
  private readonly http: http.Agent;
  private readonly https: https.Agent;

  constructor(private readonly opts: { timeoutMs: number; lookup: LookupFunction; reach: Reach; userAgent: string; clock: Clock }) {
    this.http = new http.Agent({ keepAlive: true, maxSockets: 4, lookup: opts.lookup } as http.AgentOptions);
    this.https = new https.Agent({ keepAlive: true, maxSockets: 4, lookup: opts.lookup } as https.AgentOptions);
  }

  /** `id` is the `webhook-id`: `webhookId(event)` for an event, a fresh one for a test. */
  post(target: string, body: string, secret: string, id: string): Promise<PostResult> {
    const started = performance.now();
    const refuse = (error: string): Promise<PostResult> => Promise.resolve({ ok: false, status: null, body: null, error, durationMs: 0, refused: true });
    let url: URL;
    try {
      // The parse registration checked: the request below is made to this URL object's hostname.
      url = parseWebhookUrl(target);
    } catch (err) {
      return refuse((err as Error).message);
    }
    const secure = url.protocol === 'https:';
    // Node connects to an IP literal without calling `lookup`: the policy is applied here.
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) !== 0 && isRefusedAddress(literal, this.opts.reach)) return refuse(new RefusedAddressError(literal, literal, this.opts.reach).message);
    return new Promise((resolve) => {
      let settled = false;
      const finish = (r: Omit<PostResult, 'durationMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...r, durationMs: Math.round(performance.now() - started) });
      };
      const req = (secure ? https : http).request(url, {
        method: 'POST',
        agent: secure ? this.https : this.http,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-service-signature': signature(secret, body),
          ...standardHeaders(secret, id, Math.floor(this.opts.clock.now() / 1000), body),
          'user-agent': this.opts.userAgent,
        },
      });
      const timer = setTimeout(() => {
        req.destroy();
        finish({ ok: false, status: null, body: null, error: `timed out after ${this.opts.timeoutMs / 1000} s` });
      }, this.opts.timeoutMs);
      req.on('error', (err) =>
        finish({ ok: false, status: null, body: null, error: err.message, ...((err as { code?: string }).code === 'EREFUSEDADDRESS' ? { refused: true as const } : {}) }),
      );
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const done = () => {
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          const redirect = status >= 300 && status < 400 ? `redirect to ${String(res.headers.location ?? '(no location)').slice(0, 500)} not followed` : null;
          finish({ ok: status >= 200 && status < 300, status, body: text, error: redirect ?? (status >= 200 && status < 300 ? null : `HTTP ${status}`) });
        };
        res.on('data', (chunk: Buffer) => {
          if (kept < RESPONSE_BODY_LIMIT) {
            const part = chunk.subarray(0, RESPONSE_BODY_LIMIT - kept);
            chunks.push(part);
            kept += part.length;
          }
          // Enough kept: the rest is not read, and the connection is not reused.
          if (kept >= RESPONSE_BODY_LIMIT) {
            done();
            res.destroy();
          }
        });
        res.on('end', done);
        res.on('error', (err) => finish({ ok: false, status: res.statusCode ?? null, body: null, error: err.message }));
      });
      req.end(body);
    });
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

/** The three Standard Webhooks headers of one attempt. */
export const standardHeaders = (secret: string, id: string, timestamp: number, body: string): Record<string, string> => ({
  'webhook-id': id,
  'webhook-timestamp': String(timestamp),
  'webhook-signature': standardSignature(secret, id, timestamp, body),
});

/** The poster the configuration asks for: its timeout, its address policy, our name, the clock that stamps attempts. */
export function configuredPoster(config: Config, hosts: HostResolver, clock: Clock): WebhookPoster {
  return new WebhookPoster({
    clock,
    timeoutMs: config.webhooks.timeout * 1000,
    lookup: policyLookup(hosts, webhookReach(config)),
    reach: webhookReach(config),
    userAgent: `mailsvc-webhooks/1.0 (+${config.server.hostname})`,
  });
}
