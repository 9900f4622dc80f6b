import { Batcher } from '../core/batcher.ts';
import type { Logger } from '../core/ports.ts';
import type { Db } from '../store/db.ts';
import { shapingRepo } from '../store/shaping.ts';

/** How long a domain's recorded group is trusted before it is written again (its MX may move). */
const DOMAIN_RECORD_MS = 3_600_000;
/** Domains remembered at most; the oldest is forgotten first (and written again when next seen). */
const REMEMBERED = 100_000;

/**
 * Which destination group each recipient domain is in, as deliveries found it from MX hosts,
 * written to `delivery_domains` for claims (their exclusions and caps go by it) and statistics.
 * A domain is written when first seen, when its group changes and after an hour, in batches.
 */
export class DomainGroups {
  private readonly recorded = new Map<string, { group: string; at: number }>();
  private readonly writes: Batcher<{ domain: string; group: string; expiresAt: number }, void>;

  constructor(db: Db, log: Logger) {
    this.writes = new Batcher({
      name: 'the domain groups',
      maxInFlight: 1,
      start: 'immediate',
      write: async (batch) => {
        const rows = batch.take();
        await shapingRepo.recordDomains(db, rows).catch((err: unknown) => {
          // Only claims' exclusions and statistics read it; the next sighting writes it again.
          for (const r of rows) this.recorded.delete(r.domain);
          log.warn({ err }, 'could not record destination groups');
        });
      },
    });
  }

  /** Notes that `domain` is in `group` now, writing it when the database may not know it yet. */
  record(domain: string, group: string, now: number): void {
    const known = this.recorded.get(domain);
    if (known && known.group === group && known.at + DOMAIN_RECORD_MS >= now) return;
    this.recorded.set(domain, { group, at: now });
    if (this.recorded.size > REMEMBERED) this.recorded.delete(this.recorded.keys().next().value!);
    void this.writes.add({ domain, group, expiresAt: now + DOMAIN_RECORD_MS }).catch(() => undefined);
  }

  /** The group a claim names a domain's rows by: as recorded, else a group of its own (`domain:`, as the claim says). */
  known(domain: string): string {
    return this.recorded.get(domain)?.group ?? `domain:${domain}`;
  }

  /** Writes what is queued, then refuses more. */
  close(): Promise<void> {
    return this.writes.close();
  }
}
