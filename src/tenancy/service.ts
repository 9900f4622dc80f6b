import { invalid, notFound, conflict, unauthorized } from '../core/errors.ts';
import type { Clock } from '../core/ports.ts';
import { iso, isoOrNull } from '../core/time.ts';
import type { Db } from '../store/db.ts';
import { apiKeys, type ApiKeyRow, type AuthenticatedKeyRow } from '../store/apiKeys.ts';
import { workspaces, type WorkspaceRow } from '../store/workspaces.ts';
import { domainsRepo } from '../store/domains.ts';
import { poolProblem, type PoolSettings } from '../delivery/pool-choice.ts';
import { API_KEY_PATTERN, generateApiKey, hashApiKey, keyPrefix, sameHash } from './keys.ts';
import { scopeOf, type Principal } from './principal.ts';
import { CHANGE_VISIBLE_WITHIN_MS, TtlCache } from './ttl-cache.ts';

export const DEFAULT_LIMITS = { perMinute: 60, perHour: 1000 };

/** Plans raise the limits; explicit numbers win over a plan's. */
export const PLANS: Record<string, { perMinute: number; perHour: number }> = {
  free: DEFAULT_LIMITS,
  scale: { perMinute: 600, perHour: 20_000 },
  dedicated: { perMinute: 3000, perHour: 200_000 },
};

export interface ApiKeyView {
  id: number;
  name: string;
  prefix: string;
  scope: string;
  created_at: string;
  revoked_at: string | null;
}

export const keyView = (row: ApiKeyRow): ApiKeyView => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  scope: scopeOf(row.domain),
  created_at: iso(row.created_at),
  revoked_at: isoOrNull(row.revoked_at),
});

export const workspaceView = (row: WorkspaceRow) => ({
  id: row.id,
  name: row.name,
  plan: row.plan,
  rate_per_minute: row.rate_per_minute,
  rate_per_hour: row.rate_per_hour,
  pool: row.pool,
  created_at: iso(row.created_at),
});

export class TenancyService {
  /** Principals of keys seen recently, by key hash: one database read per key per few seconds. */
  private readonly principals = new TtlCache<string, Principal>(CHANGE_VISIBLE_WITHIN_MS);
  /** The same, by key id, for keys named in configuration (`submission.trustedNetworks`). */
  private readonly principalsById = new TtlCache<number, Principal>(CHANGE_VISIBLE_WITHIN_MS);

  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      /** delivery.pools: the pools a workspace may name. */
      pools: PoolSettings['pools'];
    },
  ) {}

  async createWorkspace(name: string) {
    const trimmed = name.trim();
    if (!/^[\w.-]{1,200}$/.test(trimmed)) {
      throw invalid('Workspace name must be 1-200 letters, digits, dots, dashes or underscores');
    }
    const { db, clock } = this.deps;
    return db.transaction(async (tx) => {
      if (await workspaces.byName(tx, trimmed)) throw conflict(`Workspace ${trimmed} already exists`);
      const workspace = await workspaces.insert(tx, {
        name: trimmed,
        plan: 'free',
        rate_per_minute: DEFAULT_LIMITS.perMinute,
        rate_per_hour: DEFAULT_LIMITS.perHour,
        created_at: clock.now(),
      });
      const key = await this.insertKey(tx, workspace.id, 'default', null);
      return { workspace, apiKey: key.secret, keyRow: key.row };
    });
  }

  async workspaceByName(name: string): Promise<WorkspaceRow> {
    const row = await workspaces.byName(this.deps.db, name);
    if (!row) throw notFound();
    return row;
  }

  async workspaceById(id: number): Promise<WorkspaceRow> {
    const row = await workspaces.byId(this.deps.db, id);
    if (!row) throw notFound();
    return row;
  }

  listWorkspaces = () => workspaces.list(this.deps.db);

  async setLimits(name: string, opts: { plan?: string; perMinute?: number; perHour?: number }) {
    const row = await this.workspaceByName(name);
    const plan = opts.plan?.toLowerCase();
    if (plan !== undefined && !PLANS[plan]) throw invalid(`Unknown plan ${opts.plan}; plans: ${Object.keys(PLANS).join(', ')}`);
    const base = plan ? PLANS[plan] : { perMinute: row.rate_per_minute, perHour: row.rate_per_hour };
    const perMinute = opts.perMinute ?? base.perMinute;
    const perHour = opts.perHour ?? base.perHour;
    for (const [label, n] of [
      ['per-minute', perMinute],
      ['per-hour', perHour],
    ] as const) {
      if (!Number.isInteger(n) || n < 1) throw invalid(`The ${label} limit must be a positive integer`);
    }
    await workspaces.setLimits(this.deps.db, row.id, { plan: plan ?? row.plan, rate_per_minute: perMinute, rate_per_hour: perHour });
    this.principals.clear();
    this.principalsById.clear();
    return (await workspaces.byId(this.deps.db, row.id))!;
  }

  /** The pool the workspace's mail goes from unless its domain names one: a name of delivery.pools, or null for none. */
  async setPool(name: string, pool: string | null) {
    const row = await this.workspaceByName(name);
    const problem = poolProblem(this.deps.pools, pool);
    if (problem) throw invalid(problem);
    await workspaces.setPool(this.deps.db, row.id, pool);
    return (await workspaces.byId(this.deps.db, row.id))!;
  }

  async createKey(workspaceId: number, opts: { name?: string; domain?: string | null }) {
    const domain = opts.domain?.trim().toLowerCase() || null;
    const { db } = this.deps;
    if (domain) {
      const owned = await domainsRepo.byName(db, domain);
      if (!owned || owned.workspace_id !== workspaceId) throw invalid(`Domain ${domain} is not a domain of this workspace`);
    }
    const name = (opts.name ?? '').trim() || (domain ? `domain ${domain}` : 'workspace key');
    if (name.length > 200) throw invalid('Field `name` must be at most 200 characters');
    return this.insertKey(db, workspaceId, name, domain);
  }

  private async insertKey(db: Db | Parameters<typeof apiKeys.insert>[0], workspaceId: number, name: string, domain: string | null) {
    const secret = generateApiKey();
    const row = await apiKeys.insert(db, {
      workspace_id: workspaceId,
      name,
      prefix: keyPrefix(secret),
      key_hash: hashApiKey(secret),
      domain,
      created_at: this.deps.clock.now(),
    });
    return { secret, row };
  }

  listKeys = (workspaceId?: number) => apiKeys.list(this.deps.db, workspaceId);

  async revokeKey(id: number, workspaceId?: number): Promise<ApiKeyRow> {
    const row = await apiKeys.byId(this.deps.db, id);
    if (!row || (workspaceId !== undefined && row.workspace_id !== workspaceId)) throw notFound();
    await apiKeys.revoke(this.deps.db, id, this.deps.clock.now());
    this.principals.clear();
    this.principalsById.clear();
    return (await apiKeys.byId(this.deps.db, id))!;
  }

  /** Resolves a bearer token to its principal; any failure is the one 401. */
  async authenticate(token: string | undefined): Promise<Principal> {
    if (!token || !API_KEY_PATTERN.test(token)) throw unauthorized();
    const hash = hashApiKey(token);
    const cached = this.principals.get(hash);
    if (cached) return cached;
    const row = await apiKeys.byHash(this.deps.db, hash);
    if (!row || !sameHash(row.key_hash, hash)) throw unauthorized();
    const principal = principalOf(row);
    this.principals.set(hash, principal);
    return principal;
  }

  /** The principal of a live key by its id, cached as `authenticate`'s are: a trusted network's key, once per message. */
  async principalOfLiveKey(keyId: number): Promise<Principal> {
    const cached = this.principalsById.get(keyId);
    if (cached) return cached;
    const principal = await this.principalOfKey(keyId);
    this.principalsById.set(keyId, principal);
    return principal;
  }

  /** The principal of a console session's key; a revoked key ends its sessions with the one 401. */
  async principalOfKey(keyId: number): Promise<Principal> {
    const row = await apiKeys.liveById(this.deps.db, keyId);
    if (!row) throw unauthorized();
    return principalOf(row);
  }
}

const principalOf = (row: AuthenticatedKeyRow): Principal => ({
  keyId: row.id,
  workspaceId: row.workspace_id,
  domain: row.domain,
  limits: { perMinute: row.rate_per_minute, perHour: row.rate_per_hour },
});
