import type { Config } from './config/schema.ts';
import { systemClock, type Clock, type DnsResolver, type Logger, type RandomSource } from './core/ports.ts';
import { loadTokenKeyring } from './secrets/keyring.ts';
import { createTokenCodec, type TokenCodec } from './tokens/index.ts';
import { checkRenderBounds } from './tracking/bounds.ts';
import { createDnsResolver } from './dns/resolver.ts';
import { ownZone, sandboxResolver } from './sandbox/zone.ts';
import { SandboxInbox } from './sandbox/inbox.ts';
import { DomainService } from './domains/service.ts';
import { AcceptService } from './messages/accept.ts';
import { MessageQueries } from './messages/queries.ts';
import { QueueControl } from './messages/queue-control.ts';
import { SuppressionService } from './suppression/service.ts';
import { UsageService } from './usage/service.ts';
import { ReputationService } from './stats/reputation.ts';
import { StatsService } from './stats/service.ts';
import { hostResolver, webhookReach, type HostResolver } from './webhooks/address-policy.ts';
import { WebhookService } from './webhooks/service.ts';
import { RouteService } from './routes/service.ts';
import { InboundMessages } from './inbound/messages.ts';
import { TemplateService } from './templates/service.ts';
import { GroupCommitter } from './store/groupCommit.ts';
import { createLogger } from './log/logger.ts';
import { createMetrics, type Metrics } from './metrics/registry.ts';
import { windowsFor, type RateDecision } from './ratelimit/sliding.ts';
import { commitLanes, createDb, singleWriter, type Db } from './store/db.ts';
import { memoryPacer, sharedPacer, type Pacer } from './delivery/pacer.ts';
import { migrate } from './store/migrate.ts';
import { rateCountStore, rateLimits } from './store/rateLimits.ts';
import { RateCounter } from './ratelimit/counter.ts';
import { BatchedRateLimit } from './ratelimit/batched.ts';
import type { Principal } from './tenancy/principal.ts';
import { TenancyService } from './tenancy/service.ts';
import { ConsoleSessions } from './console/session.ts';
import { limitsOf } from './shaping/groups.ts';
import { BUILT_IN_PROVIDERS } from './shaping/providers.ts';

export interface ServiceOverrides {
  clock?: Clock;
  dns?: DnsResolver;
  log?: Logger;
  db?: Db;
  /** Jitter and MX shuffling. */
  random?: RandomSource;
}

export interface Services {
  config: Config;
  db: Db;
  clock: Clock;
  log: Logger;
  dns: DnsResolver;
  random: RandomSource;
  metrics: Metrics;
  /** Signed-token codecs, one per purpose so a token minted for one use is worthless for another. */
  tokens: { verp: TokenCodec; unsubscribe: TokenCodec; open: TokenCodec; click: TokenCodec };
  tenancy: TenancyService;
  domains: DomainService;
  committer: GroupCommitter;
  accept: AcceptService;
  messages: MessageQueries;
  /** Holding, releasing and canceling queued mail (SPEC §11). */
  queueControl: QueueControl;
  suppressions: SuppressionService;
  usage: UsageService;
  stats: StatsService;
  reputation: ReputationService;
  webhooks: WebhookService;
  /** Inbound routes (SPEC §14): webhook endpoints that receive the mail of a match. */
  routes: RouteService;
  /** Messages received for routes, as the API serves them. */
  inboundMessages: InboundMessages;
  /** Stored templates (SPEC §15), and a send's `template` rendered into its content. */
  templates: TemplateService;
  /** Resolves webhook hosts: through `dns.servers` when set, else the system's resolver. */
  webhookHosts: HostResolver;
  /** The sandbox inbox: what delivery captured in `delivery.mode: sandbox`. */
  sandbox: SandboxInbox;
  /** Signed session cookies of the web console. */
  consoleSessions: ConsoleSessions;
  /** Decides and counts a request; `count`: what it weighs (each message of a batch counts). */
  rateLimit(principal: Principal, count?: number): Promise<RateDecision>;
  /** Takes back what `rateLimit` counted for a request refused after all (SPEC §3: a 429 counts for nothing). */
  rateGiveBack(principal: Principal, counted: RateDecision, count?: number): Promise<void>;
  /** Pacing slots of destination groups' per-minute limits: in memory on SQLite, shared by every process on PostgreSQL. */
  pacer: Pacer;
  close(): Promise<void>;
}

/** Accepting commits in flight at once per process on PostgreSQL. */
const ACCEPT_LANES = 2;
/**
 * SQLite's commits while busy wait this long for company: each commit costs the event loop its
 * transaction and its WAL write, so fewer, larger ones leave more of it to the sessions
 * (relay +3–7% in alternating pairs). PostgreSQL's were not measured with it: none there.
 */
const SQLITE_COMMIT_LINGER_MS = 2;

/** Builds every capability service over one database; used by `serve`, the CLI and tests. */
export async function createServices(config: Config, overrides: ServiceOverrides = {}): Promise<Services> {
  const clock = overrides.clock ?? systemClock;
  const log = overrides.log ?? createLogger(config.log.level);
  const db = overrides.db ?? createDb(config.database);
  const realDns = overrides.dns ?? createDnsResolver(config.dns.servers, config.dns.timeout * 1000);
  // In the sandbox, `*.test` domains verify without DNS: their records count as published.
  const dns = config.delivery.mode === 'sandbox' ? sandboxResolver(realDns, ownZone(db, config.server.hostname)) : realDns;
  await migrate(db);
  const oneWriter = singleWriter(db);
  const committer = new GroupCommitter(db, undefined, commitLanes(config.database), oneWriter ? SQLITE_COMMIT_LINGER_MS : 0);
  // PostgreSQL: accepting commits run beside the others instead of queueing behind delivery's
  // outcomes, two at a time. They only insert new rows and add to usage counters no other
  // commit touches, in one order, so they cannot deadlock with each other or with the rest.
  // SQLite has one writer: one committer for everything.
  const acceptCommitter = oneWriter ? committer : new GroupCommitter(db, undefined, ACCEPT_LANES);
  const bounds = { maxLinks: config.tracking.maxLinksPerMessage, maxRenderedBytes: config.tracking.maxRenderedBytes, baseUrl: config.tracking.baseUrl };
  const accept = new AcceptService({ db, committer: acceptCommitter, clock, log, checkContent: (content) => checkRenderBounds(content, bounds) });
  const rateCounter = new RateCounter({ store: rateCountStore(db), flush: () => committer.run(async () => undefined) });
  const exactRate = oneWriter
    ? null
    : new BatchedRateLimit(
        (groups, windowSeconds) => rateLimits.hitGroups(db, groups, windowSeconds),
        (keyId, second, count) => rateLimits.giveBack(db, keyId, second, count),
      );
  // On PostgreSQL the counter stays empty: no hook.
  if (!exactRate) committer.setCommitHook({ due: () => rateCounter.due(), run: (tx) => rateCounter.beforeCommit(tx, clock.now()) });
  const keyring = await loadTokenKeyring(db, clock);
  const consoleKeyring = await loadTokenKeyring(db, clock, 'console');
  let metrics: Metrics | undefined;
  const inboundMessages = new InboundMessages({ db, log });
  const webhookHosts = hostResolver(dns, config.dns.servers.length > 0);
  return {
    config,
    db,
    clock,
    log,
    pacer: oneWriter ? memoryPacer() : sharedPacer(db),
    dns,
    random: overrides.random ?? Math.random,
    tokens: {
      verp: createTokenCodec(keyring, { purpose: 'verp' }),
      unsubscribe: createTokenCodec(keyring, { purpose: 'unsubscribe' }),
      open: createTokenCodec(keyring, { purpose: 'open' }),
      click: createTokenCodec(keyring, { purpose: 'click' }),
    },
    // Built on first use: the server reads them, CLI commands never do.
    get metrics() {
      return (metrics ??= createMetrics());
    },
    tenancy: new TenancyService({ db, clock, pools: config.delivery.pools }),
    domains: new DomainService({
      db,
      clock,
      dns,
      serverHostname: config.server.hostname,
      log,
      sandbox: config.delivery.mode === 'sandbox',
      onUnverified: (name) => accept.forgetDomain(name),
      pools: config.delivery.pools,
    }),
    committer,
    accept,
    messages: new MessageQueries({ db, clock }),
    queueControl: new QueueControl({ db, clock, limitsOf: (group) => limitsOf(group, config.shaping.defaults, [...config.shaping.providers, ...BUILT_IN_PROVIDERS]) }),
    suppressions: new SuppressionService({ db, clock, bulk: config.suppression }),
    usage: new UsageService({ db, clock }),
    stats: new StatsService({ db, clock }),
    reputation: new ReputationService({ db, clock, log, compliance: config.compliance }),
    webhooks: new WebhookService({ db, clock, resolve: webhookHosts, reach: webhookReach(config) }),
    routes: new RouteService({ db, clock, resolve: webhookHosts, reach: webhookReach(config) }),
    inboundMessages,
    templates: new TemplateService({ db, clock, limits: { maxRenderedBytes: config.tracking.maxRenderedBytes } }),
    webhookHosts,
    sandbox: new SandboxInbox({ db }),
    consoleSessions: new ConsoleSessions({ keyring: consoleKeyring, clock }),
    // SQLite (one process): counted in memory and stored in the next shared commit, so a
    // request's count costs no write of its own. PostgreSQL (many processes): exact across
    // them, checked and counted under the key's lock inside the server, one statement for the
    // requests that arrived together.
    rateLimit: (principal, count = 1) =>
      exactRate
        ? exactRate.hit(principal.keyId, clock.now(), windowsFor(principal.limits), count)
        : rateCounter.hit(principal.keyId, clock.now(), windowsFor(principal.limits), count),
    rateGiveBack: (principal, counted, count = 1) =>
      exactRate ? rateLimits.giveBack(db, principal.keyId, counted.second, count) : rateCounter.giveBack(principal.keyId, counted.second, count),
    close: async () => {
      await accept.close();
      await inboundMessages.close();
      rateCounter.stop();
      // One more commit stores the rate counts still pending (the hook is due once stopped).
      await committer.run(async () => undefined).catch(() => undefined);
      await Promise.all([committer.close(), acceptCommitter.close()]);
      await db.destroy();
    },
  };
}
