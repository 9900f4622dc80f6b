import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DnsError } from '../../src/core/ports.ts';
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

async function failure(promise: Promise<unknown>): Promise<DnsError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DnsError) return err;
    throw err;
  }
  throw new Error('lookup unexpectedly succeeded');
}

describe('createDnsResolver against a real DNS server', () => {
  it('resolves MX records with their preferences', async () => {
    dns.set('example.test', 'MX', [
      { exchange: 'mx2.example.test', priority: 20 },
      { exchange: 'mx1.example.test', priority: 10 },
    ]);
    const resolver = createDnsResolver([dns.address], 2000);
    const records = await resolver.resolveMx('example.test');
    expect(records.sort((a, b) => a.priority - b.priority)).toEqual([
      { exchange: 'mx1.example.test', priority: 10 },
      { exchange: 'mx2.example.test', priority: 20 },
    ]);
    expect(dns.queries).toContainEqual({ name: 'example.test', type: 'MX' });
  });

  it('resolves a null MX (RFC 7505) as an empty exchange', async () => {
    dns.set('nomail.test', 'MX', { exchange: '.', priority: 0 });
    const resolver = createDnsResolver([dns.address], 2000);
    expect(await resolver.resolveMx('nomail.test')).toEqual([{ exchange: '', priority: 0 }]);
  });

  it('resolves TXT records; a record over 255 octets arrives in chunks that join back', async () => {
    const long = `v=DKIM1; k=rsa; p=${'A'.repeat(400)}`;
    dns.set('sel._domainkey.example.test', 'TXT', [long]);
    dns.set('example.test', 'TXT', ['v=spf1 -all']);
    const resolver = createDnsResolver([dns.address], 2000);
    const chunks = await resolver.resolveTxt('sel._domainkey.example.test');
    expect(chunks).toHaveLength(1);
    expect(chunks[0]!.length).toBeGreaterThan(1);
    expect(chunks[0]!.every((chunk) => Buffer.byteLength(chunk) <= 255)).toBe(true);
    expect(chunks[0]!.join('')).toBe(long);
    expect(await resolver.resolveTxt('example.test')).toEqual([['v=spf1 -all']]);
  });

  it('answers too large for UDP arrive over TCP after the truncated reply', async () => {
    const huge = 'x'.repeat(3000);
    dns.set('big.example.test', 'TXT', [huge]);
    const resolver = createDnsResolver([dns.address], 2000);
    const chunks = await resolver.resolveTxt('big.example.test');
    expect(chunks[0]!.join('')).toBe(huge);
  });

  it('resolves A and AAAA records', async () => {
    dns.set('host.example.test', 'A', ['192.0.2.1', '192.0.2.2']);
    dns.set('host.example.test', 'AAAA', '2001:db8::1');
    const resolver = createDnsResolver([dns.address], 2000);
    expect((await resolver.resolve4('host.example.test')).sort()).toEqual(['192.0.2.1', '192.0.2.2']);
    expect(await resolver.resolve6('host.example.test')).toEqual(['2001:db8::1']);
  });

  it('matches names case-insensitively', async () => {
    dns.set('Mixed.Example.Test', 'A', '192.0.2.9');
    const resolver = createDnsResolver([dns.address], 2000);
    expect(await resolver.resolve4('mixed.EXAMPLE.test')).toEqual(['192.0.2.9']);
  });

  it('reports an unknown name as nxdomain', async () => {
    const resolver = createDnsResolver([dns.address], 2000);
    const err = await failure(resolver.resolveMx('missing.test'));
    expect(err.kind).toBe('nxdomain');
    expect(err.message).toContain('missing.test');
  });

  it('reports a known name without records of the type as nodata', async () => {
    dns.set('aonly.test', 'A', '192.0.2.3');
    const resolver = createDnsResolver([dns.address], 2000);
    expect((await failure(resolver.resolveMx('aonly.test'))).kind).toBe('nodata');
    expect((await failure(resolver.resolveTxt('aonly.test'))).kind).toBe('nodata');
  });

  it('reports SERVFAIL as temporary', async () => {
    dns.servfail('broken.test');
    const resolver = createDnsResolver([dns.address], 2000);
    expect((await failure(resolver.resolveMx('broken.test'))).kind).toBe('temporary');
  });

  it('can fail one record type of a name and answer the others', async () => {
    dns.set('partial.test', 'TXT', 'ok');
    dns.servfail('partial.test', 'A');
    const resolver = createDnsResolver([dns.address], 2000);
    expect((await failure(resolver.resolve4('partial.test'))).kind).toBe('temporary');
    expect(await resolver.resolveTxt('partial.test')).toEqual([['ok']]);
  });

  it('reports an unanswered query as temporary once the timeout runs out', async () => {
    dns.drop('silent.test');
    const resolver = createDnsResolver([dns.address], 100);
    const err = await failure(resolver.resolve4('silent.test'));
    expect(err.kind).toBe('temporary');
    expect(err.code).toBe('ETIMEOUT');
  });

  it('clear(name) forgets the name so it answers nxdomain again', async () => {
    dns.set('gone.test', 'A', '192.0.2.4');
    dns.clear('gone.test');
    const resolver = createDnsResolver([dns.address], 2000);
    expect((await failure(resolver.resolve4('gone.test'))).kind).toBe('nxdomain');
  });
});
