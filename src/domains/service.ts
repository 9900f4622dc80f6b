import { conflict, invalid, notFound } from '../core/errors.ts';
import type { Clock, DnsResolver, Logger } from '../core/ports.ts';
import { iso, isoOrNull } from '../core/time.ts';
import { generateDkimKey } from '../dkim/keys.ts';
import { poolProblem, type PoolSettings } from '../delivery/pool-choice.ts';
import type { Db } from '../store/db.ts';
import { domainsRepo, type DomainRow } from '../store/domains.ts';
import { reputationRepo } from '../store/reputation.ts';
import { domainRecords, normaliseDomainName, returnPathHost, selectorFor, type DnsRecordSpec } from './records.ts';
import { checkRecords, type RecordCheck } from './verify.ts';

/**
 * What a caller may see: a whole workspace, or (domain-scoped key) one domain of it; `null` is
 * the operator at the command line, who sees everything.
 */
/** A sender warning stays on the domain this long after its latest occurrence. */
const WARNINGS_SHOWN_MS = 7 * 86_400_000;

export type Scope = { workspaceId: number; domain?: string | null } | null;

export type DomainView = ReturnType<typeof domainView>;

export function domainView(row: DomainRow, serverHostname: string) {
  const checks: RecordCheck[] | null = row.verification ? JSON.parse(row.verification) : null;
  const records = domainRecords({
    domain: row.name,
    selector: row.selector,
    dkimPublicKey: row.dkim_public_key,
    serverHostname,
    inbound: row.inbound,
  }).map((r, i) => ({ ...r, verified: checks?.[i]?.verified ?? false }));
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    verified_by: row.verified_by,
    selector: row.selector,
    records,
    problems: checks ? checks.map((c) => c.problem).filter((p): p is string => p !== null) : [],
    open_tracking: row.open_tracking,
    click_tracking: row.click_tracking,
    pool: row.pool,
    inbound: row.inbound,
    return_path_domain: row.return_path_verified ? returnPathHost(row.name) : null,
    created_at: iso(row.created_at),
    verified_at: isoOrNull(row.verified_at),
  };
}

export class DomainService {
  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      dns: DnsResolver;
      serverHostname: string;
      log: Logger;
      sandbox?: boolean;
      /** Told when a domain may have stopped being verified here, so caches of it drop it at once. */
      onUnverified?: (name: string) => void;
      /** delivery.pools: the pools a domain may name. */
      pools: PoolSettings['pools'];
    },
  ) {}

  view = (row: DomainRow) => domainView(row, this.deps.serverHostname);

  /** What receivers said about the domain as a sender in the last 7 days (a refused authentication), newest first. */
  async warnings(row: DomainRow): Promise<{ code: string; message: string; at: string }[]> {
    const rows = await reputationRepo.warningsOf(this.deps.db, row.id, this.deps.clock.now() - WARNINGS_SHOWN_MS);
    return rows.map((w) => ({ code: w.code, message: w.message, at: iso(w.at) }));
  }

  async add(workspaceId: number, input: string): Promise<DomainRow> {
    const name = normaliseDomainName(input);
    if (!name) throw invalid(`Field \`name\` must be a fully qualified domain name, got "${input}"`);
    const { db, clock } = this.deps;
    if (await domainsRepo.byName(db, name)) throw conflict(`Domain ${name} is not available`);
    const key = await generateDkimKey();
    const now = clock.now();
    return domainsRepo.insert(db, {
      workspace_id: workspaceId,
      name,
      status: 'pending',
      verified_by: null,
      selector: selectorFor(now),
      dkim_private_key: key.privateKeyPem,
      dkim_public_key: key.publicKeyBase64,
      open_tracking: false,
      click_tracking: false,
      return_path_verified: false,
      verification: null,
      created_at: now,
      verified_at: null,
    });
  }

  async list(scope: Scope): Promise<DomainRow[]> {
    return domainsRepo.list(this.deps.db, scope ? { workspaceId: scope.workspaceId, name: scope.domain ?? undefined } : {});
  }

  /** By id or name; anything outside the scope is simply not found. */
  async get(scope: Scope, idOrName: number | string): Promise<DomainRow> {
    const row =
      typeof idOrName === 'number' ? await domainsRepo.byId(this.deps.db, idOrName) : await domainsRepo.byName(this.deps.db, normaliseDomainName(idOrName) ?? idOrName);
    if (!row) throw notFound();
    if (scope && (row.workspace_id !== scope.workspaceId || (scope.domain && scope.domain !== row.name))) throw notFound();
    return row;
  }

  records = (row: DomainRow): DnsRecordSpec[] =>
    domainRecords({ domain: row.name, selector: row.selector, dkimPublicKey: row.dkim_public_key, serverHostname: this.deps.serverHostname, inbound: row.inbound });

  /** Checks every record; the domain is verified exactly when every required record matches. */
  async verify(scope: Scope, idOrName: number | string): Promise<DomainRow> {
    const row = await this.get(scope, idOrName);
    const records = this.records(row);
    const checks = await checkRecords(records, this.deps.dns);
    const ok = records.every((r, i) => !r.required || checks[i].verified);
    // RFC 6761: `.test` never exists in the public DNS; only the sandbox can verify such a domain.
    if (!ok && !this.deps.sandbox && row.name.endsWith('.test')) {
      const failed = checks[records.findIndex((r, i) => r.required && !checks[i].verified)];
      failed.problem += '; .test domains never exist in public DNS: verify them in sandbox mode (serve --sandbox, MAILSVC_DELIVERY_MODE=sandbox for the CLI)';
    }
    const returnPath = records.findIndex((r) => r.purpose === 'return_path');
    // In the sandbox a `.test` domain's records are answered from our own table, not published
    // anywhere: the proof is the sandbox's, and the domain says so.
    const by = this.deps.sandbox && row.name.endsWith('.test') ? 'sandbox' : 'dns';
    await domainsRepo.update(this.deps.db, row.id, {
      status: ok ? 'verified' : 'pending',
      verified_by: ok ? by : null,
      verified_at: ok ? (row.verified_by === by ? row.verified_at : this.deps.clock.now()) : null,
      return_path_verified: checks[returnPath].verified,
      verification: JSON.stringify(checks),
    });
    if (!ok) this.deps.onUnverified?.(row.name);
    return (await domainsRepo.byId(this.deps.db, row.id))!;
  }

  /**
   * Marks a domain verified without DNS proof, for local trials only. Mail from it will fail
   * DKIM at real receivers; the server warns about every such domain at each start.
   */
  async forceVerify(scope: Scope, idOrName: number | string): Promise<DomainRow> {
    const row = await this.get(scope, idOrName);
    this.deps.log.warn({ domain: row.name }, 'domain marked verified WITHOUT DNS checks (operator override)');
    await domainsRepo.update(this.deps.db, row.id, { status: 'verified', verified_by: 'override', verified_at: this.deps.clock.now() });
    return (await domainsRepo.byId(this.deps.db, row.id))!;
  }

  /** Tracking switches and the sending pool (a name of delivery.pools, or null for none); an unknown pool changes nothing. */
  async update(scope: Scope, idOrName: number | string, change: { open?: boolean; click?: boolean; pool?: string | null; inbound?: boolean }) {
    const row = await this.get(scope, idOrName);
    const patch: Partial<DomainRow> = {};
    if (change.inbound !== undefined && change.inbound !== row.inbound) {
      // SPEC §14: receiving is for a domain whose ownership is proven; its MX record then becomes required too.
      if (change.inbound && row.status !== 'verified') throw invalid(`Domain ${row.name} must be verified before it can receive mail`);
      patch.inbound = change.inbound;
    }
    if (change.pool !== undefined) {
      const problem = poolProblem(this.deps.pools, change.pool);
      if (problem) throw invalid(problem);
      patch.pool = change.pool;
    }
    if (change.open !== undefined) patch.open_tracking = change.open;
    if (change.click !== undefined) patch.click_tracking = change.click;
    if (Object.keys(patch).length > 0) await domainsRepo.update(this.deps.db, row.id, patch);
    return (await domainsRepo.byId(this.deps.db, row.id))!;
  }

  async remove(scope: Scope, idOrName: number | string): Promise<DomainRow> {
    const row = await this.get(scope, idOrName);
    await domainsRepo.remove(this.deps.db, row.id);
    this.deps.onUnverified?.(row.name);
    return row;
  }

  /** Domains verified by operator override, for the start-up warning. */
  async overridden(): Promise<string[]> {
    return (await domainsRepo.list(this.deps.db)).filter((d) => d.verified_by === 'override').map((d) => d.name);
  }
}
