import { readFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import type { LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';
import type { Clock, DnsResolver, Logger } from '../core/ports.ts';
import { DnsError } from '../core/ports.ts';
import { MAX_POLICY_BYTES, parseStsPolicy, parseStsRecord, type StsPolicy } from './mta-sts-policy.ts';

/** A recipient domain's policy as delivery applies it; `mode: none` policies are never returned. */
export interface StsApplied extends StsPolicy {
  domain: string;
  mode: 'enforce' | 'testing';
}

export interface MtaStsOptions {
  dns: DnsResolver;
  clock: Clock;
  log: Logger;
  /** The HTTPS port of `mta-sts.<domain>` (443; another for tests). */
  port: number;
  /** The whole fetch: connect, TLS, headers and body. */
  timeoutMs: number;
  /** Trust anchors for the policy host's certificate: the system's plus `tls.trustedCAs`; undefined: node's. */
  ca: string[] | undefined;
}

interface Cached {
  id: string;
  policy: StsPolicy;
  /** When the policy stops being usable: fetched at + max_age (RFC 8461 §3.2). */
  expiresAt: number;
}

interface Checked {
  /** What delivery uses now: null for no policy (none published, or none could be fetched). */
  applied: StsApplied | null;
  /** Until when this answer is reused without asking the DNS again. */
  until: number;
}

/** How long an answer (the TXT record's id checked) is reused before the TXT is asked again. */
const RECHECK_MS = 60_000;
/** After a failed fetch, no new one for this long: each message must not wait out the timeout again. */
const RETRY_FETCH_MS = 5 * 60_000;
const MAX_DOMAINS = 10_000;

/**
 * The system's trust anchors plus the PEM file `tls.trustedCAs` names (private PKI, tests);
 * undefined without one: node's own roots apply.
 */
export function trustAnchors(trustedCAs: string | null): string[] | undefined {
  if (trustedCAs === null) return undefined;
  let pem: string;
  try {
    pem = trustedCAs.includes('-----BEGIN') ? trustedCAs : readFileSync(trustedCAs, 'utf8');
  } catch (err) {
    throw new Error(`tls.trustedCAs: cannot read ${trustedCAs}: ${(err as Error).message}`, { cause: err });
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`tls.trustedCAs: ${trustedCAs} holds no PEM certificate`);
  return [...rootCertificates, pem];
}

/** Node's `lookup` through our resolver (`dns.servers`), so `mta-sts.<domain>` resolves as its MX does. */
function lookupThrough(dns: DnsResolver): LookupFunction {
  return (hostname, options, callback) => {
    const wanted = options.family === 6 ? [6] : options.family === 4 ? [4] : [4, 6];
    void Promise.allSettled(wanted.map((family) => (family === 4 ? dns.resolve4(hostname) : dns.resolve6(hostname)))).then((answers) => {
      const found = answers.flatMap((answer, i) => (answer.status === 'fulfilled' ? answer.value.map((address) => ({ address, family: wanted[i]! })) : []));
      if (found.length === 0) {
        const err = answers.find((a) => a.status === 'rejected')?.reason as unknown;
        const code = err instanceof DnsError ? err.code : 'ENOTFOUND';
        return callback(Object.assign(new Error(`${hostname} has no address (${code})`), { code }), '', 4);
      }
      if (options.all) return (callback as unknown as (e: null, a: typeof found) => void)(null, found);
      callback(null, found[0]!.address, found[0]!.family);
    });
  };
}

/**
 * MTA-STS policies of recipient domains (RFC 8461), fetched and cached in this process's memory.
 * A domain's lookup is one promise that every delivery to it shares and nothing else waits on,
 * so a policy host that stalls holds up its own domain's mail for at most the fetch timeout and
 * no one else's. A fetch that fails leaves a cached, unexpired policy in force; without one the
 * domain is treated as having no policy (§5: a sender must not defer mail because a policy
 * could not be fetched).
 */
export class MtaSts {
  private readonly policies = new Map<string, Cached>();
  private readonly answers = new Map<string, Checked>();
  private readonly inFlight = new Map<string, Promise<StsApplied | null>>();
  private readonly failedUntil = new Map<string, number>();

  constructor(private readonly opts: MtaStsOptions) {}

  /** The policy delivery to `domain` follows now, or null. */
  policyFor(domainInput: string): Promise<StsApplied | null> {
    const domain = domainInput.toLowerCase().replace(/\.$/, '');
    const answer = this.answers.get(domain);
    if (answer && answer.until > this.opts.clock.now()) return Promise.resolve(answer.applied);
    let pending = this.inFlight.get(domain);
    if (!pending) {
      pending = this.check(domain).finally(() => this.inFlight.delete(domain));
      this.inFlight.set(domain, pending);
    }
    return pending;
  }

  private async check(domain: string): Promise<StsApplied | null> {
    const applied = await this.current(domain);
    // Not past the policy's own expiry: then the TXT record decides again.
    const until = Math.min(this.opts.clock.now() + RECHECK_MS, this.policies.get(domain)?.expiresAt ?? Infinity);
    bounded(this.answers, domain, { applied, until });
    return applied;
  }

  /** RFC 8461 §5.1: the TXT id against the cached policy's, a fetch when they differ. */
  private async current(domain: string): Promise<StsApplied | null> {
    const now = this.opts.clock.now();
    let cached = this.policies.get(domain);
    if (cached && cached.expiresAt <= now) {
      this.policies.delete(domain);
      cached = undefined;
    }
    let records: string[][];
    try {
      records = await this.opts.dns.resolveTxt(`_mta-sts.${domain}`);
    } catch (err) {
      // No record (or no answer now): a cached policy stays in force until it expires (§3.3).
      if (!(err instanceof DnsError) || err.kind === 'temporary') this.opts.log.debug({ domain, err: String(err) }, 'MTA-STS TXT lookup failed');
      return applies(domain, cached);
    }
    const record = parseStsRecord(records);
    if ('none' in record) return applies(domain, cached);
    if (cached && cached.id === record.id) return applies(domain, cached);
    if ((this.failedUntil.get(domain) ?? 0) > now) return applies(domain, cached);

    const fetched = await this.fetch(domain);
    if ('failed' in fetched) {
      bounded(this.failedUntil, domain, this.opts.clock.now() + RETRY_FETCH_MS);
      this.opts.log.warn(
        { domain, reason: fetched.failed, cached: cached !== undefined },
        `MTA-STS policy of ${domain} could not be fetched: ${fetched.failed}; ${cached ? 'the cached policy stays in force' : 'delivering as without a policy'}`,
      );
      return applies(domain, cached);
    }
    this.failedUntil.delete(domain);
    const entry = { id: record.id, policy: fetched, expiresAt: this.opts.clock.now() + fetched.maxAge * 1000 };
    bounded(this.policies, domain, entry);
    this.opts.log.info({ domain, id: record.id, mode: fetched.mode, mx: fetched.mx, max_age: fetched.maxAge }, `MTA-STS policy of ${domain} fetched`);
    return applies(domain, entry);
  }

  /**
   * `https://mta-sts.<domain>/.well-known/mta-sts.txt` (RFC 8461 §3.3): a verified certificate
   * for that name, 200 with text/plain, no redirects, at most 64 KB, all within the timeout.
   */
  private fetch(domain: string): Promise<StsPolicy | { failed: string }> {
    const host = `mta-sts.${domain}`;
    const options: RequestOptions = {
      host,
      servername: host,
      port: this.opts.port,
      path: '/.well-known/mta-sts.txt',
      method: 'GET',
      headers: { accept: 'text/plain' },
      ...(this.opts.ca ? { ca: this.opts.ca } : {}),
      rejectUnauthorized: true,
      lookup: lookupThrough(this.opts.dns),
      agent: false,
    };
    return new Promise((resolve) => {
      let done = false;
      const finish = (value: StsPolicy | { failed: string }): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        req.destroy();
        resolve(value);
      };
      const timer = setTimeout(() => finish({ failed: `no complete answer from ${host} within ${this.opts.timeoutMs} ms` }), this.opts.timeoutMs);
      const req = request(options, (res) => {
        const status = res.statusCode ?? 0;
        // §3.3: "HTTP 3xx redirects MUST NOT be followed".
        if (status >= 300 && status < 400) return finish({ failed: `${host} answered ${status} (a redirect, which RFC 8461 §3.3 refuses)` });
        if (status !== 200) return finish({ failed: `${host} answered ${status}` });
        const type = (res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        if (type !== 'text/plain') return finish({ failed: `${host} served ${type || 'no content type'}, not text/plain` });
        const tooBig = { failed: `the policy at ${host} is larger than ${MAX_POLICY_BYTES} bytes` };
        if (Number(res.headers['content-length'] ?? 0) > MAX_POLICY_BYTES) return finish(tooBig);
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_POLICY_BYTES) return finish(tooBig);
          chunks.push(chunk);
        });
        res.on('end', () => {
          const parsed = parseStsPolicy(Buffer.concat(chunks).toString('utf8'));
          finish('invalid' in parsed ? { failed: parsed.invalid } : parsed);
        });
        res.on('error', (err) => finish({ failed: `${host}: ${err.message}` }));
      });
      req.on('error', (err) => finish({ failed: `${host}: ${err.message}` }));
      req.end();
    });
  }
}

function applies(domain: string, cached: Cached | undefined): StsApplied | null {
  if (!cached || cached.policy.mode === 'none') return null;
  return { ...cached.policy, mode: cached.policy.mode, domain };
}

/** Map insertion with the oldest entry dropped past `MAX_DOMAINS`. */
function bounded<T>(map: Map<string, T>, key: string, value: T): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_DOMAINS) map.delete(map.keys().next().value!);
}
