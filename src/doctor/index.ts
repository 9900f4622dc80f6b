import { Resolver } from 'node:dns/promises';
import type { Config } from '../config/schema.ts';
import { DnsError } from '../core/ports.ts';
import { createDnsResolver } from '../dns/resolver.ts';
import { domainRecords } from '../domains/records.ts';
import { checkRecords } from '../domains/verify.ts';
import type { Db } from '../store/db.ts';
import { domainsRepo } from '../store/domains.ts';
import { pemOrFile } from '../tls/certificates.ts';
import { checkCertificate, checkClock, checkDatabase, checkHostname, checkOutbound, type DoctorDns, type Finding } from './checks.ts';

export type { Finding } from './checks.ts';

export interface DoctorOptions {
  /** The domain whose MX the outbound check connects to (unless a relay is configured). */
  probeDomain: string;
  /** An HTTP(S) URL whose Date header the clock is compared with; null skips the check. */
  clockUrl: string | null;
  timeoutMs: number;
  now: () => number;
}

/** `1.0.0.127.in-addr.arpa` for 127.0.0.1. */
const reverseName = (address: string) => `${address.split('.').reverse().join('.')}.in-addr.arpa`;

/**
 * The configured resolver plus reverse lookups, through the same dns.servers. A PTR query, not
 * Resolver.reverse, which answers from /etc/hosts first: receivers see the public DNS only.
 */
function doctorDns(config: Config): DoctorDns {
  const timeoutMs = config.dns.timeout * 1000;
  const reverse = new Resolver({ timeout: timeoutMs, tries: 2 });
  if (config.dns.servers.length > 0) reverse.setServers(config.dns.servers);
  return {
    ...createDnsResolver(config.dns.servers, timeoutMs),
    reverse: async (address) => {
      try {
        return await reverse.resolvePtr(reverseName(address));
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
        throw new DnsError(code === 'ENOTFOUND' ? 'nxdomain' : code === 'ENODATA' ? 'nodata' : 'temporary', address, code);
      }
    },
  };
}

/** Each sending domain's published records, checked as `domain verify` does, without changing its status. */
async function checkDomains(db: Db, dns: DoctorDns, serverHostname: string): Promise<Finding[]> {
  const rows = await domainsRepo.list(db);
  if (rows.length === 0) return [{ check: 'domains', status: 'skipped', detail: 'no sending domain yet (mailsvc domain add)' }];
  return Promise.all(
    rows.map(async (row): Promise<Finding> => {
      const records = domainRecords({ domain: row.name, selector: row.selector, dkimPublicKey: row.dkim_public_key, serverHostname });
      const checks = await checkRecords(records, dns);
      const failed = records.map((r, i) => ({ r, c: checks[i]! })).filter(({ c }) => !c.verified);
      const required = failed.filter(({ r }) => r.required);
      const check = `domain ${row.name}`;
      if (required.length > 0) {
        return {
          check,
          status: 'problem',
          detail: required.map(({ c }) => c.problem).join('; '),
          fix: `publish the records \`mailsvc domain show ${row.name}\` lists, then run mailsvc domain verify ${row.name}`,
        };
      }
      const optional = failed.map(({ r }) => r.purpose);
      return { check, status: 'ok', detail: optional.length > 0 ? `required records match; optional ones missing: ${optional.join(', ')}` : 'every record matches' };
    }),
  );
}

function certificate(config: Config, nowMs: number): Finding {
  let cert: string | null;
  let key: string | null;
  try {
    cert = config.tls.cert && pemOrFile(config.tls.cert);
    key = config.tls.key && pemOrFile(config.tls.key);
  } catch (err) {
    return { check: 'TLS certificate', status: 'problem', detail: `cannot read: ${(err as Error).message}`, fix: 'point tls.cert and tls.key at readable PEM files' };
  }
  return checkCertificate(cert, key, config.server.hostname, nowMs);
}

/** Every check of a production configuration, in the order an operator would fix them. */
export async function runDoctor(config: Config, options: DoctorOptions): Promise<Finding[]> {
  const dns = doctorDns(config);
  const hostname = config.server.hostname;
  const [{ createDb }, { pendingMigrations }, { probeWrite }] = await Promise.all([import('../store/db.ts'), import('../store/migrate.ts'), import('../store/probe.ts')]);
  const db = createDb(config.database);
  try {
    const database = await checkDatabase(
      () => probeWrite(db),
      () => pendingMigrations(db),
    );
    const tablesReady = database.every((f) => f.status === 'ok');
    const [host, outbound, domains, clock] = await Promise.all([
      checkHostname(hostname, dns),
      checkOutbound(config.delivery, dns, options.probeDomain, options.timeoutMs),
      tablesReady ? checkDomains(db, dns, hostname) : Promise.resolve([{ check: 'domains', status: 'skipped', detail: 'database not ready' } as Finding]),
      checkClock(options.clockUrl, options.now, options.timeoutMs),
    ]);
    return [...host, outbound, ...domains, certificate(config, options.now()), ...database, clock];
  } finally {
    await db.destroy();
  }
}
