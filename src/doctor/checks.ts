import { X509Certificate, createPrivateKey } from 'node:crypto';
import { connect, isIP } from 'node:net';
import type { Config } from '../config/schema.ts';
import { DnsError, type DnsResolver } from '../core/ports.ts';

/** One check's verdict, with what to do about a problem. */
export interface Finding {
  check: string;
  status: 'ok' | 'problem' | 'skipped';
  detail: string;
  fix?: string;
}

export interface DoctorDns extends DnsResolver {
  reverse(address: string): Promise<string[]>;
}

const ok = (check: string, detail: string): Finding => ({ check, status: 'ok', detail });
const problem = (check: string, detail: string, fix: string): Finding => ({ check, status: 'problem', detail, fix });
const skipped = (check: string, detail: string): Finding => ({ check, status: 'skipped', detail });

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const lower = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** A name receivers accept in EHLO and PTR: at least two labels, none numeric-only at the top. */
export function isFqdn(name: string): boolean {
  const labels = lower(name).split('.');
  return labels.length >= 2 && name.length <= 253 && labels.every((l) => LABEL.test(l)) && !/^\d+$/.test(labels.at(-1)!);
}

const dnsReason = (err: unknown) => (err instanceof DnsError ? err.code : (err as Error).message);

/** server.hostname is a fully qualified name, has an A record, and each address's PTR names it back. */
export async function checkHostname(hostname: string, dns: DoctorDns): Promise<Finding[]> {
  const check = 'hostname';
  if (!isFqdn(hostname)) {
    return [
      problem(
        check,
        `server.hostname "${hostname}" is not a fully qualified domain name`,
        'set server.hostname (MAILSVC_SERVER_HOSTNAME) to the public name of this machine, e.g. mail.example.com',
      ),
    ];
  }
  let addresses: string[];
  try {
    addresses = await dns.resolve4(hostname);
  } catch (err) {
    return [
      problem('hostname A record', `${hostname} has no A record (${dnsReason(err)})`, `publish an A record for ${hostname} pointing at this machine's public address`),
    ];
  }
  const findings = [ok(check, `${hostname} resolves to ${addresses.join(', ')}`)];
  for (const address of addresses) {
    let names: string[];
    try {
      names = (await dns.reverse(address)).map(lower);
    } catch (err) {
      findings.push(
        problem(
          'reverse DNS',
          `${address} has no PTR record (${dnsReason(err)})`,
          `ask the owner of ${address} (your hosting provider) to set its PTR record to ${hostname}`,
        ),
      );
      continue;
    }
    if (names.includes(lower(hostname))) findings.push(ok('reverse DNS', `${address} points back to ${hostname}`));
    else
      findings.push(
        problem(
          'reverse DNS',
          `${address} points back to ${names.join(', ')}, not ${hostname}`,
          `set the PTR record of ${address} to ${hostname}, or server.hostname to ${names[0]}`,
        ),
      );
  }
  return findings;
}

/** An address as resolvers write it: IPv6 in its shortest form (RFC 5952), so `2001:db8:0::25` equals `2001:db8::25`. */
const canonical = (address: string) => (isIP(address) === 6 ? new URL(`http://[${address}]`).hostname.slice(1, -1) : address);

/**
 * Each source address's reverse DNS is forward-confirmed (FCrDNS): its PTR names its `ehlo`, and
 * that name's A (AAAA) records include the address. Google's and Yahoo's sender requirements
 * (2024) ask for valid forward and reverse DNS on every sending address, and many receivers
 * compare the EHLO name with the PTR.
 */
export async function checkSourceAddresses(sources: Config['delivery']['sourceAddresses'], dns: DoctorDns): Promise<Finding[]> {
  return Promise.all(
    sources.map(async ({ address, ehlo }): Promise<Finding> => {
      const check = `source address ${address}`;
      const key = 'delivery.sourceAddresses';
      if (!isFqdn(ehlo)) {
        return problem(check, `its ehlo "${ehlo}" is not a fully qualified domain name`, `set its ehlo in ${key} to the public name its PTR record gives`);
      }
      let names: string[];
      try {
        names = (await dns.reverse(address)).map(lower);
      } catch (err) {
        return problem(check, `${address} has no PTR record (${dnsReason(err)})`, `ask the owner of ${address} (your hosting provider) to set its PTR record to ${ehlo}`);
      }
      if (!names.includes(lower(ehlo))) {
        return problem(
          check,
          `${address} points back to ${names.join(', ')}, not its ehlo ${ehlo}`,
          `set the PTR record of ${address} to ${ehlo}, or its ehlo in ${key} to ${names[0]} (if that name resolves to ${address})`,
        );
      }
      const six = isIP(address) === 6;
      const type = six ? 'AAAA' : 'A';
      let forward: string[];
      try {
        forward = await (six ? dns.resolve6(ehlo) : dns.resolve4(ehlo));
      } catch (err) {
        return problem(check, `${ehlo} has no ${type} record (${dnsReason(err)})`, `publish an ${type} record for ${ehlo} pointing at ${address}`);
      }
      if (!forward.map(canonical).includes(canonical(address))) {
        return problem(check, `${ehlo} resolves to ${forward.join(', ')}, not ${address}`, `add ${address} to the ${type} records of ${ehlo}`);
      }
      return ok(check, `${address} points back to ${ehlo}, which resolves to it`);
    }),
  );
}

/** Opens a TCP connection and closes it; resolves with the error code when it cannot. */
function tryConnect(host: string, port: number, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      resolve(`no answer within ${timeoutMs / 1000} s`);
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(null);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/** Outbound SMTP: the relay when one is set, else the first MX of `probeDomain` on delivery.port. */
export async function checkOutbound(delivery: Config['delivery'], dns: DnsResolver, probeDomain: string, timeoutMs: number): Promise<Finding> {
  const check = 'outbound SMTP';
  let host: string;
  let port = delivery.port;
  if (delivery.relayHost) {
    const at = delivery.relayHost.lastIndexOf(':');
    host = delivery.relayHost.slice(0, at);
    port = Number(delivery.relayHost.slice(at + 1));
  } else {
    try {
      const mx = (await dns.resolveMx(probeDomain)).sort((a, b) => a.priority - b.priority);
      if (mx.length === 0) return skipped(check, `${probeDomain} has no MX record to try; name another with --probe-domain`);
      const exchange = mx[0]!.exchange;
      // Through dns.servers, as delivery looks hosts up, not the system resolver.
      host = isIP(exchange) ? exchange : (await dns.resolve4(exchange))[0]!;
    } catch (err) {
      return skipped(check, `could not look up the MX of ${probeDomain} or its address (${dnsReason(err)}); name another with --probe-domain`);
    }
  }
  const failure = await tryConnect(host, port, timeoutMs);
  if (!failure) return ok(check, `connected to ${host}:${port}`);
  const fix = delivery.relayHost
    ? `check delivery.relayHost (${delivery.relayHost}) and the firewall between this machine and it`
    : `allow outbound TCP to port ${port}; if the provider blocks port 25, send through a smarthost with delivery.relayHost (host:port)`;
  return problem(check, `cannot connect to ${host}:${port}: ${failure}`, fix);
}

/** The configured certificate parses, matches its key, covers the hostname and is not about to expire. */
export function checkCertificate(cert: string | null, key: string | null, hostname: string, nowMs: number, warnDays = 21): Finding {
  const check = 'TLS certificate';
  if (!cert && !key) {
    return ok(check, 'none configured: a self-signed certificate is generated into the data directory, which sending MTAs accept for STARTTLS');
  }
  if (!cert || !key) return problem(check, 'only one of tls.cert and tls.key is set', 'set both tls.cert and tls.key, or neither');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    return problem(check, `tls.cert does not parse: ${(err as Error).message}`, 'point tls.cert at a PEM certificate (chain)');
  }
  try {
    if (!x509.checkPrivateKey(createPrivateKey(key))) return problem(check, 'tls.key does not belong to tls.cert', 'use the key the certificate was issued for');
  } catch (err) {
    return problem(check, `tls.key does not parse: ${(err as Error).message}`, 'point tls.key at the PEM private key');
  }
  const notAfter = Date.parse(x509.validTo);
  const days = Math.floor((notAfter - nowMs) / 86_400_000);
  if (Date.parse(x509.validFrom) > nowMs) return problem(check, `not valid before ${x509.validFrom}`, 'check the clock, or use a certificate valid now');
  if (notAfter <= nowMs) return problem(check, `expired on ${x509.validTo}`, 'renew the certificate');
  if (days < warnDays) return problem(check, `expires in ${days} day(s), on ${x509.validTo}`, 'renew the certificate now');
  if (!x509.checkHost(hostname)) return problem(check, `does not cover ${hostname} (subject ${x509.subject.replace(/\n/g, ', ')})`, `use a certificate for ${hostname}`);
  return ok(check, `valid for ${hostname} until ${x509.validTo} (${days} days)`);
}

/** A write that is rolled back, and no migration left to apply. */
export async function checkDatabase(probeWrite: () => Promise<void>, pending: () => Promise<string[]>): Promise<Finding[]> {
  try {
    await probeWrite();
  } catch (err) {
    return [
      problem('database', `cannot write: ${(err as Error).message}`, 'check database.connection, the permissions of the data directory, or the database user’s rights'),
    ];
  }
  const names = await pending();
  if (names.length > 0)
    return [
      ok('database', 'writable'),
      problem('migrations', `${names.length} not applied: ${names.join(', ')}`, 'run mailsvc migrate (serve also applies them at start)'),
    ];
  return [ok('database', 'writable'), ok('migrations', 'all applied')];
}

/** Local time against the Date header of `url`: more than `maxSkewS` apart is a problem. */
export async function checkClock(url: string | null, nowMs: () => number, timeoutMs: number, maxSkewS = 10): Promise<Finding> {
  const check = 'clock';
  if (!url) return skipped(check, 'no reference given (--clock-url)');
  let date: string | null;
  const sent = nowMs();
  try {
    date = (await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(timeoutMs) })).headers.get('date');
  } catch (err) {
    return skipped(check, `${url} did not answer (${(err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message}); clock not compared`);
  }
  const received = nowMs();
  const remote = date ? Date.parse(date) : NaN;
  if (Number.isNaN(remote)) return skipped(check, `${url} sent no usable Date header; clock not compared`);
  // The header has whole seconds: compare with the middle of the request, allowing for both.
  const skew = (sent + received) / 2 - remote - 500;
  if (Math.abs(skew) / 1000 > maxSkewS) {
    return problem(
      check,
      `${Math.round(Math.abs(skew) / 1000)} s ${skew > 0 ? 'ahead of' : 'behind'} ${url}`,
      'run NTP (e.g. systemd-timesyncd or chrony); DKIM signatures and retry times depend on the clock',
    );
  }
  return ok(check, `within ${maxSkewS} s of ${url}`);
}
