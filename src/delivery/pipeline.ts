import type { Config } from '../config/schema.ts';
import type { Clock, DnsResolver, Logger, RandomSource } from '../core/ports.ts';
import { signingKeys } from '../domains/keys.ts';
import { returnPathDomain } from '../domains/records.ts';
import { ReturnPathDomains } from '../domains/return-path.ts';
import type { Metrics } from '../metrics/registry.ts';
import type { Db } from '../store/db.ts';
import { dkimKeysRepo } from '../store/dkim-keys.ts';
import { domainsRepo } from '../store/domains.ts';
import { messagesRepo, type MessageWithContent, type RecipientRow } from '../store/messages.ts';
import type { RecipientTls } from '../store/queue.ts';
import { workspaces } from '../store/workspaces.ts';
import type { TokenCodec } from '../tokens/index.ts';
import { readContent } from '../messages/content.ts';
import { TtlCache } from './cache.ts';
import type { BuiltCopy } from './copy-builder.ts';
import type { DkimKey, PreparedMessage } from './compose.ts';
import { resolveDestination, type Destination } from './mx.ts';
import type { MtaSts, StsApplied } from './mta-sts.ts';
import { mxMatches } from './mta-sts-policy.ts';
import { poolFor, type PoolInput } from './pool-choice.ts';
import { judgeDestination, judgeSend, type Verdict } from './outcome.ts';
import type { Relay } from './relay.ts';
import type { RenderStep } from './render.ts';
import type { FairScheduler } from './fair-scheduler.ts';
import type { Lane, Shaper, SourceAddress } from './shaper.ts';
import type { CopySigner } from './sign-pool.ts';
import type { SmtpSendResult, SmtpTransport } from './transport.ts';
import { verpSender } from './verp.ts';

export interface PipelineDeps {
  config: Config;
  db: Db;
  clock: Clock;
  random: RandomSource;
  dns: DnsResolver;
  log: Logger;
  metrics: Metrics;
  verp: TokenCodec;
  transport: SmtpTransport;
  render: RenderStep;
  /** Builds and signs each copy (signing threads, or the event loop). */
  signer: CopySigner;
  /** Decides whose copy is rendered and signed next: heavy work round-robin by workspace. */
  scheduler: FairScheduler;
  /** With a smarthost there is no MX lookup: everything goes to it. */
  relay: Relay | undefined;
  /** Destination groups and their limits (SPEC §11); mail to a smarthost or the sandbox is not shaped. */
  shaper: Shaper;
  /** Recipient domains' MTA-STS policies (RFC 8461); null: not followed (turned off, a smarthost, the sandbox). */
  mtaSts: MtaSts | null;
}

interface SendingDomain {
  /** Its active keys, RSA first: each copy carries a signature of each (SPEC §13). */
  keys: DkimKey[];
  returnPathDomain: string;
  tracking: { open: boolean; click: boolean };
  /** The pools its row and its workspace's name, read with it (5 s): `poolFor({ ...pools, stream }, config.delivery)`. */
  pools: Omit<PoolInput, 'stream'>;
}

/**
 * A stored message as the event loop keeps it for its recipients: the row (what the signer builds
 * the MIME from) and its text parts (what the render step starts from).
 */
export interface StoredMessage {
  row: MessageWithContent;
  message: PreparedMessage['message'];
  html: string | null;
  text: string | null;
  size: number;
}

function stored(id: number, row: MessageWithContent | undefined): StoredMessage {
  if (!row) throw new Error(`message ${id} is gone`);
  const content = readContent(row.content, row.raw);
  if (content === null) throw new Error(`message ${row.id} has no content left (pruned)`);
  const parts = content.kind === 'fields' ? { html: content.html, text: content.text } : { html: null, text: null };
  const message = { id: row.id, workspace_id: row.workspace_id, domain: row.domain, stream: row.stream, message_id_header: row.message_id_header };
  return { row, message, ...parts, size: row.content!.length + (row.raw?.length ?? 0) + row.envelope.length };
}

/**
 * What rendering and signing one recipient's copy costs, in the scheduler's units: the text
 * parts' size when the render step rewrites them per recipient (tracking, or unsubscribe URLs on
 * broadcast mail); otherwise the copy reuses the message's encoded parts and hash: nothing.
 */
function renderWeight(prepared: StoredMessage, tracking: { open: boolean; click: boolean }): number {
  if (!tracking.open && !tracking.click && prepared.message.stream !== 'broadcast') return 0;
  return (prepared.html?.length ?? 0) + (prepared.text?.length ?? 0);
}

/** Stored messages kept for their next recipients, by total size (a 1 MB message counts 1 MB). */
const MAX_CACHED_BYTES = 64 * 1024 * 1024;

/**
 * One recipient's way out, as a list of steps each of which may end it with a verdict: the
 * message's shared MIME (built once for all its recipients), route, envelope sender, render,
 * sign, send. Routing comes before signing, so a domain that cannot be resolved costs no RSA
 * signature on each retry.
 */
export class RecipientPipeline {
  private readonly messages: TtlCache<StoredMessage>;
  private readonly domains: TtlCache<SendingDomain>;
  private readonly destinations: TtlCache<Destination>;
  private readonly returnPaths: ReturnPathDomains;
  private turn = 0;
  /** Each pool's addresses with their greeting names, by the pool's list (config's own arrays). */
  private readonly sourceLists = new WeakMap<readonly string[], SourceAddress[]>();
  /** Pool warnings already logged (a name no longer configured): once each, not once per message. */
  private readonly warned = new Set<string>();

  constructor(private readonly deps: PipelineDeps) {
    // Short lives: what the CLI changes (a domain's return path verified, a key rotated) reaches
    // a running worker within seconds, and DNS answers are not kept past a few seconds.
    this.messages = new TtlCache(deps.clock, 60_000, 1000, { weigh: (p) => p.size, maxWeight: MAX_CACHED_BYTES });
    this.domains = new TtlCache(deps.clock, 5_000, 1000);
    this.destinations = new TtlCache(deps.clock, 5_000, 5000);
    this.returnPaths = new ReturnPathDomains(deps.db, deps.clock, deps.config.inbound.returnPathDomain);
  }

  /** The message row and its text parts, loaded once for all its recipients. */
  prepared(messageId: number): Promise<StoredMessage> {
    return this.messages.get(String(messageId), async () => stored(messageId, await messagesRepo.byId(this.deps.db, messageId)));
  }

  /**
   * The messages of a claimed batch that are not cached yet, loaded in one query; their
   * recipients' `prepared` calls then share it instead of asking one by one.
   */
  preload(messageIds: number[]): void {
    const missing = [...new Set(messageIds)].filter((id) => !this.messages.has(String(id)));
    if (missing.length < 2) return;
    const rows = messagesRepo.byIds(this.deps.db, missing);
    // Only fills the cache: a failed load is forgotten by it, and `prepared` asks again.
    for (const id of missing) void this.messages.get(String(id), async () => stored(id, (await rows).get(id)));
  }

  async attempt(row: RecipientRow, prepared: StoredMessage): Promise<Verdict> {
    const destination = await this.destination(row.domain);
    if (destination.kind !== 'hosts') return judgeDestination(destination);
    const sts = this.shaped() && this.deps.mtaSts ? await this.deps.mtaSts.policyFor(row.domain) : null;
    const hosts = sts ? this.allowedBy(sts, destination.hosts) : destination.hosts;
    if (sts && hosts.length === 0) {
      const named = destination.hosts.join(', ');
      const response = `MTA-STS policy of ${sts.domain} (enforce): ${named} ${destination.hosts.length > 1 ? 'are' : 'is'} not named by the policy (mx: ${sts.mx.join(', ')})`;
      return { kind: 'deferred', host: null, code: null, response };
    }
    const pool = await this.poolOf(prepared);
    if (!this.shaped()) {
      // A smarthost or the sandbox: no shaping, the pool's addresses in turn.
      const source = pool.length > 0 ? pool[this.turn++ % pool.length]! : null;
      return this.send(row, prepared, hosts, source === null ? null : { group: '', source, key: '' }, false);
    }
    const shaper = this.deps.shaper;
    const group = shaper.groupOf(row.domain, destination.hosts);
    if (shaper.holdOn(group, row, prepared.message)) {
      this.deps.metrics.shapingDeferred.inc({ reason: 'held' });
      return { kind: 'shaped', host: null, code: null, response: `Not sent yet: ${group} is on hold (mailsvc queue release)`, until: this.deps.clock.now() + 1000 };
    }
    const admission = shaper.enter(group, pool);
    if (admission.kind === 'wait') {
      this.deps.metrics.shapingDeferred.inc({ reason: admission.why });
      return { kind: 'shaped', host: null, code: null, response: `Not sent yet: ${admission.reason}`, until: admission.until };
    }
    try {
      return await this.send(row, prepared, hosts, admission.lane, true, pool, sts);
    } finally {
      admission.done();
    }
  }

  /**
   * The MX hosts a policy lets mail go to (RFC 8461 §4.1): in `enforce` those its `mx` patterns
   * name; in `testing` all of them, the others logged as what enforcing would refuse.
   */
  private allowedBy(sts: StsApplied, hosts: string[]): string[] {
    const named = hosts.filter((host) => mxMatches(host, sts.mx));
    if (sts.mode === 'enforce') return named;
    for (const host of hosts) {
      if (!named.includes(host)) {
        this.deps.log.warn(
          { domain: sts.domain, mode: sts.mode, host, mx: sts.mx },
          `MTA-STS policy of ${sts.domain} (testing): ${host} is not named by the policy; delivering anyway`,
        );
      }
    }
    return hosts;
  }

  /**
   * What an attempt's connection amounted to under the domain's policy: the recipient's `tls`,
   * and for `enforce` a TLS failure said to be the policy's; `testing` logs what would have failed.
   */
  private underPolicy(result: SmtpSendResult, sts: StsApplied | null): { tls: RecipientTls | null; result: SmtpSendResult } {
    const tls = result.tls;
    if (sts?.mode === 'enforce' && !result.ok && (result.stage === 'tls' || !tls)) {
      const response = result.stage === 'tls' ? `MTA-STS policy of ${sts.domain} (enforce): TLS with ${result.host} failed: ${result.response}` : result.response;
      return { tls: null, result: { ...result, response } };
    }
    if (!tls) return { tls: null, result };
    if (sts?.mode === 'testing' && tls.problem !== null) {
      this.deps.log.warn(
        { domain: sts.domain, mode: sts.mode, host: result.host, problem: tls.problem },
        `MTA-STS policy of ${sts.domain} (testing): ${result.host} would be refused when enforced: ${tls.problem}`,
      );
    }
    const label: RecipientTls = !tls.secure ? 'none' : sts?.mode === 'enforce' && tls.verified ? 'mta-sts' : 'opportunistic';
    return { tls: label, result };
  }

  /** The sending addresses a message may go out from (SPEC §12); none: the kernel's choice. */
  private async poolOf(prepared: StoredMessage): Promise<readonly SourceAddress[]> {
    const delivery = this.deps.config.delivery;
    if (delivery.sourceAddresses.length === 0) return [];
    const sending = await this.sendingDomain(prepared.message.domain);
    const choice = poolFor({ ...sending.pools, stream: prepared.message.stream }, delivery);
    if (choice.warning && !this.warned.has(choice.warning)) {
      this.warned.add(choice.warning);
      this.deps.log.warn({ domain: prepared.message.domain, pool: choice.name }, choice.warning);
    }
    let sources = this.sourceLists.get(choice.addresses);
    if (!sources) {
      const byAddress = new Map(delivery.sourceAddresses.map((s) => [s.address, s]));
      sources = choice.addresses.map((a) => byAddress.get(a)!);
      this.sourceLists.set(choice.addresses, sources);
    }
    return sources;
  }

  /**
   * The recipient's copy rendered and signed. A method, not a closure made per copy: on Node 20
   * a closure's optimised code is dropped at every full collection (bench/NOTES.md).
   */
  private async signedCopy(row: RecipientRow, prepared: StoredMessage, sending: SendingDomain, weight: number): Promise<BuiltCopy> {
    const own = await this.deps.render(prepared, {
      tracking: sending.tracking,
      recipient: { id: row.id, address: row.address },
      stream: prepared.message.stream,
      returnPathDomain: sending.returnPathDomain,
    });
    return this.deps.signer.build({ row: prepared.row, senderId: this.deps.config.server.hostname, own, keys: sending.keys, now: this.deps.clock.now(), weight });
  }

  /** Renders, signs and sends one copy, trying each host in turn through `lane` (shaped unless `shaped` is false). */
  private async send(
    row: RecipientRow,
    prepared: StoredMessage,
    hosts: string[],
    lane: Lane | null,
    shaped: boolean,
    pool: readonly SourceAddress[] = [],
    sts: StsApplied | null = null,
  ): Promise<Verdict> {
    const shaper = this.deps.shaper;
    const sending = await this.sendingDomain(prepared.message.domain);
    const from = verpSender(this.deps.verp, row.id, sending.returnPathDomain);
    const weight = renderWeight(prepared, sending.tracking);
    const copy = await this.deps.scheduler.run(prepared.message.workspace_id, weight, () => this.signedCopy(row, prepared, sending, weight));
    if (copy.built) this.deps.metrics.deliveryMessageBuilds.inc();
    this.deps.metrics.deliverySignatures.inc();
    const raw = copy.raw;
    const source = lane?.source ?? undefined;
    let last: Verdict | null = null;
    const shaping =
      lane === null || !shaped
        ? {}
        : {
            group: { name: lane.key, ...shaper.limits(lane) },
            ready: () => shaper.pace(lane),
            // The connection a rule's reply came on is closed: the receiver asked us to go away.
            closeAfter: (r: SmtpSendResult) => !r.ok && r.code !== null && shaper.ruleFor(r.response) !== null,
          };
    // RFC 5321 §5.1: try each host in order until one takes the message or refuses it for good.
    for (const host of hosts) {
      const sent = await this.deps.transport.send({
        host,
        port: this.deps.config.delivery.port,
        envelope: { from, to: row.address },
        raw,
        source,
        ...shaping,
        ...(sts?.mode === 'enforce' ? { verifyTls: true } : {}),
      });
      const { tls, result } = this.underPolicy(sent, sts);
      if (lane !== null && shaped) {
        const shapedVerdict = await this.shapedReply(lane, result, pool);
        if (shapedVerdict) return { ...shapedVerdict, source: source?.address ?? null };
      }
      last = { ...judgeSend(result), source: source?.address ?? null, tls };
      if (last.kind !== 'deferred') return last;
    }
    return last!;
  }

  /** A reply that tells the lane to wait (a rule matched, it was suspended meanwhile, its address failed): the recipient waits with it. */
  private async shapedReply(lane: Lane, result: SmtpSendResult, pool: readonly SourceAddress[]): Promise<Verdict | null> {
    const shaper = this.deps.shaper;
    if (!result.ok && result.notSent) {
      this.deps.metrics.shapingDeferred.inc({ reason: 'paced' });
      return { kind: 'shaped', host: null, code: null, response: `Not sent yet: ${result.response}`, until: shaper.resumeAt(lane, pool) };
    }
    const elsewhere = shaper.observe(lane, result);
    if (result.ok) return null;
    if (elsewhere !== null) {
      this.deps.metrics.shapingDeferred.inc({ reason: 'address' });
      return { kind: 'shaped', host: result.host, code: result.code, response: result.response, until: this.deps.clock.now() + 1000 };
    }
    const rule = result.code === null ? null : shaper.ruleFor(result.response);
    if (!rule) return null;
    const applied = await shaper.apply(lane, rule, result.response);
    this.deps.metrics.shapingDeferred.inc({ reason: 'reply' });
    return { kind: 'shaped', host: result.host, code: result.code, response: result.response, until: applied.until };
  }

  /** Whether mail goes to MX hosts, and so is shaped: not to a smarthost, nor to the sandbox's inbox. */
  private shaped(): boolean {
    return !this.deps.relay && !this.deps.transport.fixedDestination;
  }

  private destination(domain: string): Promise<Destination> {
    const fixed = this.deps.relay?.host ?? this.deps.transport.fixedDestination;
    if (fixed) return Promise.resolve({ kind: 'hosts', hosts: [fixed], implicit: false });
    return this.destinations.get(
      domain,
      async () => resolveDestination(domain, { dns: this.deps.dns, random: this.deps.random, ownDomains: await this.ourDomains() }),
      (dest) => dest.kind !== 'temporary',
    );
  }

  /** Names that are this server: never a destination. */
  private async ourDomains(): Promise<string[]> {
    return [this.deps.config.server.hostname, ...(await this.returnPaths.snapshot())];
  }

  private sendingDomain(name: string): Promise<SendingDomain> {
    return this.domains.get(name, async () => {
      const row = await domainsRepo.byName(this.deps.db, name);
      if (!row) throw new Error(`sending domain ${name} is not configured`);
      const workspace = await workspaces.byId(this.deps.db, row.workspace_id);
      const keys = signingKeys(await dkimKeysRepo.byDomain(this.deps.db, row.id));
      return {
        keys: keys.map((k) => ({ domain: row.name, selector: k.selector, algorithm: k.algorithm, privateKeyPem: k.private_key })),
        returnPathDomain: returnPathDomain(row, this.deps.config.inbound.returnPathDomain),
        tracking: { open: row.open_tracking, click: row.click_tracking },
        pools: { domainPool: row.pool, workspacePool: workspace?.pool ?? null },
      };
    });
  }
}
