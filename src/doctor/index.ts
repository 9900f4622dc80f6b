import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Config } from '../config/schema.ts';
import { DnsError } from '../core/ports.ts';
import { createDnsResolver } from '../dns/resolver.ts';
import { recordKeys } from '../domains/keys.ts';
import { domainRecords } from '../domains/records.ts';
import { checkRecords } from '../domains/verify.ts';
import type { Db } from '../store/db.ts';
import { dkimKeysRepo } from '../store/dkim-keys.ts';
import { domainsRepo } from '../store/domains.ts';
import { pemOrFile } from '../tls/certificates.ts';
import { poolProblem } from '../delivery/pool-choice.ts';
import { apiKeys } from '../store/apiKeys.ts';
import { workspaces } from '../store/workspaces.ts';
import { checkAlignment, checkMtaSts, organisationalDomain } from './compliance.ts';
import { checkCertificate, checkClock, checkDatabase, checkHostname, checkOutbound, checkSourceAddresses, type DoctorDns, type Finding } from './checks.ts';

export type { Finding } from './checks.ts';

export interface DoctorOptions {
  /** The domain whose MX the outbound check connects to (unless a relay is configured). */
  probeDomain: string;
  /** An HTTP(S) URL whose Date header the clock is compared with; null skips the check. */
  clockUrl: string | null;
  timeoutMs: number;
  now: () => number;
}

/** `1.0.0.127.in-addr.arpa` for 127.0.0.1; RFC 3596 §2.5 nibbles under `ip6.arpa` for IPv6. */
function reverseName(address: string): string {
  if (isIP(address) !== 6) return `${address.split('.').reverse().join('.')}.in-addr.arpa`;
  const [head, tail = ''] = address.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(head!);
  const right = groups(tail);
  const full = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${[...full.map((g) => g.padStart(4, '0')).join('')].reverse().join('.')}.ip6.arpa`;
}

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
  const keys = await dkimKeysRepo.byDomains(
    db,
    rows.map((r) => r.id),
  );
  return Promise.all(
    rows.map(async (row): Promise<Finding> => {
      const records = domainRecords({ domain: row.name, keys: recordKeys(keys.get(row.id) ?? []), serverHostname, inbound: row.inbound });
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

/**
 * Sender compliance (docs/COMPLIANCE.md): each verified sending domain's DMARC record and the
 * alignment of DKIM and SPF with it, and the MTA-STS policy of the domains this server receives
 * mail for (the return path, the hostname's domain, receiving domains) where one is published.
 */
async function checkCompliance(db: Db, dns: DoctorDns, config: Config): Promise<Finding[]> {
  const rows = await domainsRepo.list(db);
  const hostname = config.server.hostname;
  const verified = rows.filter((r) => r.status === 'verified');
  const keys = await dkimKeysRepo.byDomains(
    db,
    verified.map((r) => r.id),
  );
  const alignment = await Promise.all(
    verified.map((row) =>
      checkAlignment(
        {
          name: row.name,
          records: domainRecords({ domain: row.name, keys: recordKeys(keys.get(row.id) ?? []), serverHostname: hostname }),
          returnPathVerified: row.return_path_verified,
        },
        config.inbound.returnPathDomain,
        dns,
      ),
    ),
  );
  const own = [...new Set([config.inbound.returnPathDomain, organisationalDomain(hostname), ...rows.filter((r) => r.inbound).map((r) => r.name)])];
  const sts = await Promise.all(own.map((d) => checkMtaSts(d, dns)));
  return [...alignment.flat(), ...sts];
}

/**
 * Pools that workspaces and domains name but delivery.pools no longer has (the configuration
 * changed after they were set): their mail goes from the next level's pool instead.
 */
async function checkPoolNames(db: Db, pools: Config['delivery']['pools']): Promise<Finding[]> {
  const named = [
    ...(await workspaces.list(db)).map((w) => ({
      what: `workspace ${w.name}`,
      pool: w.pool,
      next: "the stream's pool, else every source address (where its domain names none)",
    })),
    ...(await domainsRepo.list(db)).map((d) => ({ what: `domain ${d.name}`, pool: d.pool, next: "the workspace's pool, else the stream's, else every source address" })),
  ].filter((n) => n.pool !== null);
  if (named.length === 0) return [];
  const stale = named.filter((n) => poolProblem(pools, n.pool) !== null);
  if (stale.length === 0) return [{ check: 'pools', status: 'ok', detail: `every pool named (by ${named.length} workspace(s) and domain(s)) is in delivery.pools` }];
  return stale.map((n) => ({
    check: `pool of ${n.what}`,
    status: 'problem',
    detail: `${n.what} names pool "${n.pool}", which delivery.pools does not have: its mail goes from ${n.next}`,
    fix: `add pool ${n.pool} to delivery.pools, or name another: mailsvc ${n.what.replace(' ', ' pool ')} NAME|none`,
  }));
}

/** `submission.trustedNetworks` entries whose key is revoked or unknown: their clients must authenticate after all. */
async function checkTrustedNetworks(db: Db, networks: Config['submission']['trustedNetworks']): Promise<Finding[]> {
  if (networks.length === 0) return [];
  const findings: Finding[] = [];
  for (const [i, { network, keyId }] of networks.entries()) {
    if (await apiKeys.liveById(db, keyId)) continue;
    findings.push({
      check: `trusted network ${network}`,
      status: 'problem',
      detail: `submission.trustedNetworks[${i}] names API key ${keyId}, which is revoked or unknown: clients in ${network} get 530 unless they authenticate`,
      fix: `create a key for them (mailsvc key create --workspace NAME) and put its id in submission.trustedNetworks[${i}].keyId`,
    });
  }
  if (findings.length > 0) return findings;
  return [{ check: 'trusted networks', status: 'ok', detail: `the key of each of the ${networks.length} trusted network(s) is live` }];
}

function certificate(config: Config, nowMs: number): Finding {
  let cert: string | null;
  let key: string | null;
  try {
    cert = config.tls.cert && pemOrFile(config.tls.cert, 'tls.cert');
    key = config.tls.key && pemOrFile(config.tls.key, 'tls.key');
  } catch (err) {
    return { check: 'TLS certificate', status: 'problem', detail: (err as Error).message, fix: 'point tls.cert and tls.key at readable PEM files' };
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
    const [host, sources, outbound, domains, compliance, pools, trusted, clock] = await Promise.all([
      checkHostname(hostname, dns),
      checkSourceAddresses(config.delivery.sourceAddresses, dns),
      checkOutbound(config.delivery, dns, options.probeDomain, options.timeoutMs),
      tablesReady ? checkDomains(db, dns, hostname) : Promise.resolve([{ check: 'domains', status: 'skipped', detail: 'database not ready' } as Finding]),
      tablesReady ? checkCompliance(db, dns, config) : Promise.resolve([]),
      tablesReady ? checkPoolNames(db, config.delivery.pools) : Promise.resolve([]),
      tablesReady ? checkTrustedNetworks(db, config.submission.trustedNetworks) : Promise.resolve([]),
      checkClock(options.clockUrl, options.now, options.timeoutMs),
    ]);
    return [...host, ...sources, outbound, ...domains, ...compliance, ...pools, ...trusted, certificate(config, options.now()), ...database, clock];
  } finally {
    await db.destroy();
  }
}
