import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RandomSource } from '../../src/core/ports.ts';
import { resolveDestination } from '../../src/delivery/mx.ts';
import { createDnsResolver } from '../../src/dns/resolver.ts';
import { startTestDns, type TestDns } from '../helpers/dns-server.ts';

let dns: TestDns;

beforeAll(async () => {
  dns = await startTestDns();
});
afterAll(async () => {
  await dns.close();
});
beforeEach(() => dns.clear());

const OWN = ['mta.mailsvc.test', 'bounces.mailsvc.test', 'bounces.customer.test'];

function deps(random: RandomSource = () => 0, timeoutMs = 2000) {
  return { dns: createDnsResolver([dns.address], timeoutMs), random, ownDomains: OWN };
}

describe('resolveDestination', () => {
  it('orders MX hosts by preference', async () => {
    dns.set('dest.test', 'MX', [
      { exchange: 'c.dest.test', priority: 30 },
      { exchange: 'a.dest.test', priority: 10 },
      { exchange: 'b.dest.test', priority: 20 },
    ]);
    expect(await resolveDestination('dest.test', deps())).toEqual({
      kind: 'hosts',
      hosts: ['a.dest.test', 'b.dest.test', 'c.dest.test'],
      implicit: false,
    });
  });

  it('shuffles hosts of equal preference with the injected random source, keeping groups in order', async () => {
    dns.set('dest.test', 'MX', [
      { exchange: 'x1.dest.test', priority: 5 },
      { exchange: 'x2.dest.test', priority: 5 },
      { exchange: 'x3.dest.test', priority: 5 },
      { exchange: 'backup.dest.test', priority: 50 },
    ]);
    const seen = new Set<string>();
    for (const value of [0, 0.2, 0.4, 0.6, 0.8, 0.9999]) {
      const result = await resolveDestination(
        'dest.test',
        deps(() => value),
      );
      if (result.kind !== 'hosts') throw new Error(result.message);
      expect(result.hosts.slice(0, 3).sort()).toEqual(['x1.dest.test', 'x2.dest.test', 'x3.dest.test']);
      expect(result.hosts[3]).toBe('backup.dest.test');
      seen.add(result.hosts.slice(0, 3).join(','));
    }
    expect(seen.size).toBeGreaterThan(1);
  });

  it('normalises case and trailing dots, and drops duplicate hosts', async () => {
    dns.set('dest.test', 'MX', [
      { exchange: 'MX.Dest.Test', priority: 10 },
      { exchange: 'mx.dest.test', priority: 20 },
    ]);
    expect(await resolveDestination('DEST.test.', deps())).toMatchObject({ kind: 'hosts', hosts: ['mx.dest.test'] });
  });

  it('falls back to the domain itself when it has no MX but an A or AAAA record (implicit MX)', async () => {
    dns.set('v4.test', 'A', '192.0.2.10');
    dns.set('v6.test', 'AAAA', '2001:db8::10');
    expect(await resolveDestination('v4.test', deps())).toEqual({ kind: 'hosts', hosts: ['v4.test'], implicit: true });
    expect(await resolveDestination('v6.test', deps())).toEqual({ kind: 'hosts', hosts: ['v6.test'], implicit: true });
  });

  it('bounces a domain without MX and without addresses with 5.1.2', async () => {
    dns.set('txtonly.test', 'TXT', 'v=spf1 -all');
    expect(await resolveDestination('txtonly.test', deps())).toMatchObject({ kind: 'permanent', status: '5.1.2' });
  });

  it('bounces a null MX with 5.1.10', async () => {
    dns.set('nomail.test', 'MX', { exchange: '.', priority: 0 });
    dns.set('nomail.test', 'A', '192.0.2.11');
    const result = await resolveDestination('nomail.test', deps());
    expect(result).toMatchObject({ kind: 'permanent', status: '5.1.10' });
  });

  it('bounces a domain that does not exist with 5.1.2', async () => {
    const result = await resolveDestination('no-such-domain.test', deps());
    expect(result).toMatchObject({ kind: 'permanent', status: '5.1.2' });
    if (result.kind === 'permanent') expect(result.message).toContain('NXDOMAIN');
  });

  it('defers on SERVFAIL of the MX lookup and of the address fallback', async () => {
    dns.servfail('broken.test');
    expect(await resolveDestination('broken.test', deps())).toMatchObject({ kind: 'temporary' });
    dns.set('halfbroken.test', 'TXT', 'x');
    dns.servfail('halfbroken.test', 'A');
    expect(await resolveDestination('halfbroken.test', deps())).toMatchObject({ kind: 'temporary' });
    expect(dns.queries).toContainEqual({ name: 'halfbroken.test', type: 'A' });
  });

  it('defers when the DNS server does not answer in time', async () => {
    dns.drop('silent.test');
    const result = await resolveDestination(
      'silent.test',
      deps(() => 0, 100),
    );
    expect(result).toMatchObject({ kind: 'temporary' });
    if (result.kind === 'temporary') expect(result.message).toContain('ETIMEOUT');
  });

  it('refuses to deliver to our own domains or to an MX that is ourselves', async () => {
    expect(await resolveDestination('bounces.customer.test', deps())).toMatchObject({
      kind: 'permanent',
      status: '5.4.6',
    });
    dns.set('pointsatus.test', 'MX', { exchange: 'mta.mailsvc.test', priority: 10 });
    expect(await resolveDestination('pointsatus.test', deps())).toMatchObject({ kind: 'permanent', status: '5.4.6' });
  });

  it('keeps MX hosts preferred over ourselves and drops those behind us, as Postfix does', async () => {
    dns.set('mixed.test', 'MX', [
      { exchange: 'primary.mixed.test', priority: 10 },
      { exchange: 'bounces.mailsvc.test.', priority: 20 },
      { exchange: 'backup.mixed.test', priority: 30 },
    ]);
    expect(await resolveDestination('mixed.test', deps())).toEqual({
      kind: 'hosts',
      hosts: ['primary.mixed.test'],
      implicit: false,
    });
  });
});
