import { conflict, invalid, notFound } from '../core/errors.ts';
import type { Clock, DnsResolver, Logger } from '../core/ports.ts';
import { iso, isoOrNull } from '../core/time.ts';
import { generateDkimKey, type DkimAlgorithm } from '../dkim/keys.ts';
import { poolProblem, type PoolSettings } from '../delivery/pool-choice.ts';
import type { Db } from '../store/db.ts';
import { dkimKeysRepo, type DkimKeyRow } from '../store/dkim-keys.ts';
import { domainsRepo, type DomainRow } from '../store/domains.ts';
import { reputationRepo } from '../store/reputation.ts';
import { afterVerification, DAY_MS, DEFAULT_OVERLAP_DAYS, keyView, newSelector, primaryKey, recordKeys, type KeyChange } from './keys.ts';
import { domainRecords, normaliseDomainName, returnPathHost, type DnsRecordSpec } from './records.ts';
import { checkRecords, type RecordCheck } from './verify.ts';

/**
 * What a caller may see: a whole workspace, or (domain-scoped key) one domain of it; `null` is
 * the operator at the command line, who sees everything.
 */
/** A sender warning stays on the domain this long after its latest occurrence. */
const WARNINGS_SHOWN_MS = 7 * 86_400_000;

export type Scope = { workspaceId: number; domain?: string | null } | null;

/** A domain with its DKIM keys, oldest first. */
export type DomainWithKeys = DomainRow & { keys: DkimKeyRow[] };

/** A check as stored in `domains.verification`: with its record's name, type and value (before SPEC §13, by position only). */
type StoredCheck = RecordCheck & { name?: string; type?: string; value?: string };

export type DomainView = ReturnType<typeof domainView>;
export function domainView(row: DomainWithKeys, serverHostname: string) {
  const checks: StoredCheck[] | null = row.verification ? JSON.parse(row.verification) : null;
  const specs = domainRecords({ domain: row.name, keys: recordKeys(row.keys), serverHostname, inbound: row.inbound });
  // Checks stored before SPEC §13 line up by position with a list of one DKIM record.
  const byPosition = checks?.[0]?.name === undefined && specs.filter((r) => r.purpose === 'dkim').length === 1;
  const checkOf = (r: DnsRecordSpec, i: number): StoredCheck | undefined =>
    byPosition ? checks?.[i] : checks?.find((c) => c.name === r.name && c.type === r.type && c.value === r.value);
  const records = specs.map((r, i) => ({ ...r, verified: checkOf(r, i)?.verified ?? false }));
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    verified_by: row.verified_by,
    selector: row.selector,
    records,
    keys: row.keys.map((k) => keyView(k, row.name)),
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

  view = (row: DomainWithKeys) => domainView(row, this.deps.serverHostname);

  /** What receivers said about the domain as a sender in the last 7 days (a refused authentication), newest first. */
  async warnings(row: DomainRow): Promise<{ code: string; message: string; at: string }[]> {
    const rows = await reputationRepo.warningsOf(this.deps.db, row.id, this.deps.clock.now() - WARNINGS_SHOWN_MS);
    return rows.map((w) => ({ code: w.code, message: w.message, at: iso(w.at) }));
  }

  /** Its keys, retiring ones whose overlap has ended retired first. */
  private async withKeys(row: DomainRow): Promise<DomainWithKeys> {
    await dkimKeysRepo.retireDue(this.deps.db, [row.id], this.deps.clock.now());
    return { ...row, keys: await dkimKeysRepo.byDomain(this.deps.db, row.id) };
  }

  private async reload(id: number): Promise<DomainWithKeys> {
    return this.withKeys((await domainsRepo.byId(this.deps.db, id))!);
  }

  async add(workspaceId: number, input: string): Promise<DomainWithKeys> {
    const name = normaliseDomainName(input);
    if (!name) throw invalid(`Field \`name\` must be a fully qualified domain name, got "${input}"`);
    const { db, clock } = this.deps;
    if (await domainsRepo.byName(db, name)) throw conflict(`Domain ${name} is not available`);
    const key = await generateDkimKey('rsa-sha256');
    const now = clock.now();
    const selector = newSelector(now, 'rsa-sha256', []);
    const row = await domainsRepo.insert(db, {
      workspace_id: workspaceId,
      name,
      status: 'pending',
      verified_by: null,
      selector,
      dkim_private_key: key.privateKeyPem,
      dkim_public_key: key.publicKeyBase64,
      open_tracking: false,
      click_tracking: false,
      return_path_verified: false,
      verification: null,
      created_at: now,
      verified_at: null,
    });
    const first = await dkimKeysRepo.insert(db, {
      domain_id: row.id,
      selector,
      algorithm: 'rsa-sha256',
      private_key: key.privateKeyPem,
      public_key: key.publicKeyBase64,
      status: 'pending',
      replaces_key_id: null,
      overlap_ms: null,
      created_at: now,
      verified_at: null,
      retire_after: null,
      retired_at: null,
    });
    return { ...row, keys: [first] };
  }

  async list(scope: Scope): Promise<DomainWithKeys[]> {
    const rows = await domainsRepo.list(this.deps.db, scope ? { workspaceId: scope.workspaceId, name: scope.domain ?? undefined } : {});
    const ids = rows.map((r) => r.id);
    if (ids.length > 0) await dkimKeysRepo.retireDue(this.deps.db, ids, this.deps.clock.now());
    const keys = await dkimKeysRepo.byDomains(this.deps.db, ids);
    return rows.map((r) => ({ ...r, keys: keys.get(r.id) ?? [] }));
  }

  /** By id or name; anything outside the scope is simply not found. */
  async get(scope: Scope, idOrName: number | string): Promise<DomainWithKeys> {
    return this.withKeys(await this.row(scope, idOrName));
  }

  private async row(scope: Scope, idOrName: number | string): Promise<DomainRow> {
    const row =
      typeof idOrName === 'number' ? await domainsRepo.byId(this.deps.db, idOrName) : await domainsRepo.byName(this.deps.db, normaliseDomainName(idOrName) ?? idOrName);
    if (!row) throw notFound();
    if (scope && (row.workspace_id !== scope.workspaceId || (scope.domain && scope.domain !== row.name))) throw notFound();
    return row;
  }

  records = (row: DomainWithKeys): DnsRecordSpec[] =>
    domainRecords({ domain: row.name, keys: recordKeys(row.keys), serverHostname: this.deps.serverHostname, inbound: row.inbound });

  /**
   * Checks every record; the domain is verified exactly when every required record matches.
   * Each pending key whose record matched becomes active, and the key a rotation replaces
   * retiring (SPEC §13, src/domains/keys.ts).
   */
  async verify(scope: Scope, idOrName: number | string): Promise<DomainWithKeys> {
    const row = await this.get(scope, idOrName);
    const records = this.records(row);
    const checks = await checkRecords(records, this.deps.dns);
    const matched = new Set(row.keys.filter((k) => records.some((r, i) => r.purpose === 'dkim' && r.selector === k.selector && checks[i].verified)).map((k) => k.id));
    await this.apply(afterVerification(row.keys, matched, this.deps.clock.now()));
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
      verification: JSON.stringify(records.map((r, i): StoredCheck => ({ name: r.name, type: r.type, value: r.value, ...checks[i] }))),
    });
    if (!ok) this.deps.onUnverified?.(row.name);
    return this.syncPrimary(await this.reload(row.id));
  }

  /** Key changes in order: activations are stored before retirements. */
  private async apply(changes: KeyChange[]): Promise<void> {
    for (const change of changes) await dkimKeysRepo.update(this.deps.db, change.id, change.patch);
  }

  /** The domain's selector and key columns follow its primary key (what one-key readers see). */
  private async syncPrimary(row: DomainWithKeys): Promise<DomainWithKeys> {
    const key = primaryKey(row.keys);
    if (!key || (key.selector === row.selector && key.public_key === row.dkim_public_key)) return row;
    const patch = { selector: key.selector, dkim_private_key: key.private_key, dkim_public_key: key.public_key };
    await domainsRepo.update(this.deps.db, row.id, patch);
    return { ...row, ...patch };
  }

  /**
   * A key of another algorithm beside the domain's (dual signing: RSA and Ed25519). It is
   * pending until its record verifies; a second key of an algorithm the domain has is a rotation.
   */
  async addKey(scope: Scope, idOrName: number | string, algorithm: DkimAlgorithm): Promise<DkimKeyRow> {
    const row = await this.get(scope, idOrName);
    const live = row.keys.find((k) => k.algorithm === algorithm && (k.status === 'pending' || k.status === 'active'));
    if (live) {
      throw conflict(`Domain ${row.name} already has a ${algorithm} key (selector ${live.selector}, ${live.status}); replace it with a rotation instead`);
    }
    return this.newKey(row, algorithm, null, null);
  }

  /**
   * A new key (new selector) for each active key of the algorithm, or of every algorithm when
   * none is named. The old key keeps signing until the new one verifies, then stays published
   * for `overlapDays` (default 7).
   */
  async rotate(scope: Scope, idOrName: number | string, options: { algorithm?: DkimAlgorithm; overlapDays?: number } = {}): Promise<DkimKeyRow[]> {
    const overlapDays = options.overlapDays ?? DEFAULT_OVERLAP_DAYS;
    if (!Number.isInteger(overlapDays) || overlapDays < 0 || overlapDays > 365) {
      throw invalid(`Field \`overlap_days\` must be a whole number of days from 0 to 365, got ${overlapDays}`);
    }
    const row = await this.get(scope, idOrName);
    const targets = row.keys.filter((k) => k.status === 'active' && (!options.algorithm || k.algorithm === options.algorithm));
    if (targets.length === 0) {
      const pending = row.keys.find((k) => k.status === 'pending' && (!options.algorithm || k.algorithm === options.algorithm));
      if (pending) throw conflict(`Key ${pending.selector} of ${row.name} is still pending: publish its record and verify the domain before rotating`);
      throw invalid(`Domain ${row.name} has no active ${options.algorithm ?? 'DKIM'} key to rotate`);
    }
    for (const old of targets) {
      const next = row.keys.find((k) => k.replaces_key_id === old.id && k.status === 'pending');
      if (next) throw conflict(`Key ${old.selector} of ${row.name} is being rotated already: publish ${next.selector}'s record and verify the domain`);
    }
    const created: DkimKeyRow[] = [];
    for (const old of targets) {
      const key = await this.newKey({ ...row, keys: [...row.keys, ...created] }, old.algorithm, old.id, overlapDays * DAY_MS);
      created.push(key);
    }
    return created;
  }

  private async newKey(row: DomainWithKeys, algorithm: DkimAlgorithm, replaces: number | null, overlapMs: number | null): Promise<DkimKeyRow> {
    const pair = await generateDkimKey(algorithm);
    const now = this.deps.clock.now();
    return dkimKeysRepo.insert(this.deps.db, {
      domain_id: row.id,
      selector: newSelector(
        now,
        algorithm,
        row.keys.map((k) => k.selector),
      ),
      algorithm,
      private_key: pair.privateKeyPem,
      public_key: pair.publicKeyBase64,
      status: 'pending',
      replaces_key_id: replaces,
      overlap_ms: overlapMs,
      created_at: now,
      verified_at: null,
      retire_after: null,
      retired_at: null,
    });
  }

  /**
   * Marks a domain verified without DNS proof, for local trials only. Mail from it will fail
   * DKIM at real receivers; the server warns about every such domain at each start.
   */
  async forceVerify(scope: Scope, idOrName: number | string): Promise<DomainWithKeys> {
    const row = await this.get(scope, idOrName);
    this.deps.log.warn({ domain: row.name }, 'domain marked verified WITHOUT DNS checks (operator override)');
    const now = this.deps.clock.now();
    // Its pending keys sign too, as if their records had verified.
    await this.apply(afterVerification(row.keys, new Set(row.keys.map((k) => k.id)), now));
    await domainsRepo.update(this.deps.db, row.id, { status: 'verified', verified_by: 'override', verified_at: now });
    return this.syncPrimary(await this.reload(row.id));
  }

  /** Tracking switches and the sending pool (a name of delivery.pools, or null for none); an unknown pool changes nothing. */
  async update(scope: Scope, idOrName: number | string, change: { open?: boolean; click?: boolean; pool?: string | null; inbound?: boolean }) {
    const row = await this.row(scope, idOrName);
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
    return this.reload(row.id);
  }

  async remove(scope: Scope, idOrName: number | string): Promise<DomainRow> {
    const row = await this.row(scope, idOrName);
    await dkimKeysRepo.removeForDomain(this.deps.db, row.id);
    await domainsRepo.remove(this.deps.db, row.id);
    this.deps.onUnverified?.(row.name);
    return row;
  }

  /** Domains verified by operator override, for the start-up warning. */
  async overridden(): Promise<string[]> {
    return (await domainsRepo.list(this.deps.db)).filter((d) => d.verified_by === 'override').map((d) => d.name);
  }
}
