import type { Clock } from '../core/ports.ts';
import type { Conn } from '../store/db.ts';
import { domainsRepo } from '../store/domains.ts';
import { returnPathDomain } from './records.ts';

/** How long a snapshot is used; a domain verified from the CLI is accepted within this time. */
export const RETURN_PATH_CACHE_MS = 5_000;

/**
 * Every return-path domain in use: the global `inbound.returnPathDomain`, and `bounces.<d>` of
 * every domain whose optional return_path record verified. The inbound listener takes reports
 * for them; delivery never sends to them.
 */
export class ReturnPathDomains {
  private cached: { at: number; set: Set<string> } | null = null;
  private loading: Promise<Set<string>> | null = null;

  constructor(
    private readonly db: Conn,
    private readonly clock: Clock,
    private readonly globalDomain: string,
  ) {}

  async snapshot(): Promise<ReadonlySet<string>> {
    if (this.cached && this.clock.now() - this.cached.at < RETURN_PATH_CACHE_MS) return this.cached.set;
    this.loading ??= this.load().finally(() => (this.loading = null));
    return this.loading;
  }

  private async load(): Promise<Set<string>> {
    const set = new Set([this.globalDomain.toLowerCase()]);
    for (const d of await domainsRepo.list(this.db)) set.add(returnPathDomain(d, this.globalDomain).toLowerCase());
    this.cached = { at: this.clock.now(), set };
    return set;
  }
}
