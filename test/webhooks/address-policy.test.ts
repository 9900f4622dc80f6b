import { describe, expect, it, onTestFinished } from 'vitest';
import { createDnsResolver } from '../../src/dns/resolver.ts';
import { checkUrlAtRegistration, hostResolver, isGlobalUnicast, policyLookup, type HostResolver } from '../../src/webhooks/address-policy.ts';
import { WebhookPoster } from '../../src/webhooks/post.ts';
import { ManualClock } from '../helpers/clock.ts';
import { startTestDns, type TestDns } from '../helpers/dns-server.ts';
import { startReceiver } from './receiver.ts';

/** Addresses a webhook must not reach by default, each with why. */
const REFUSED: [string, string][] = [
  ['0.0.0.0', 'this network'],
  ['10.1.2.3', 'private'],
  ['100.64.0.1', 'shared address space (CGNAT)'],
  ['100.127.255.254', 'shared address space, last'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.255', 'loopback, last'],
  ['169.254.169.254', 'link-local: cloud metadata'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private, last'],
  ['192.0.0.8', 'IETF protocol assignments'],
  ['192.0.2.1', 'documentation'],
  ['192.88.99.1', '6to4 relay anycast'],
  ['192.168.1.1', 'private'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking, last'],
  ['198.51.100.1', 'documentation'],
  ['203.0.113.1', 'documentation'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast (SSDP)'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:a9fe:a9fe', 'IPv4-mapped metadata'],
  ['::a9fe:a9fe', 'IPv4-compatible (deprecated) metadata'],
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::ffff:0:7f00:1', 'IPv4-translated'],
  ['64:ff9b::10.0.0.1', 'NAT64 of a private address'],
  ['64:ff9b::a9fe:a9fe', 'NAT64 of metadata'],
  ['64:ff9b:1::808:808', 'local-use NAT64'],
  ['2002:c0a8:101::1', '6to4 of 192.168.1.1'],
  ['2002:7f00:1::', '6to4 of 127.0.0.1'],
  ['2002:a9fe:a9fe::1', '6to4 of metadata'],
  ['2001::1', 'Teredo'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation (RFC 9637)'],
  ['100::1', 'discard-only'],
  ['fe80::1', 'link-local'],
  ['fe80::1%lo', 'link-local with a zone'],
  ['fec0::1', 'site-local (deprecated)'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456::1', 'unique-local'],
  ['ff02::1', 'multicast'],
  ['ff0e::1', 'multicast, global scope'],
  ['not an address', 'not an address'],
];

const ALLOWED = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '100.63.255.255',
  '100.128.0.1',
  '172.15.255.255',
  '172.32.0.1',
  '198.17.255.255',
  '198.20.0.1',
  '223.255.255.254',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  '::ffff:8.8.8.8',
  '64:ff9b::8.8.8.8',
  '2002:808:808::1',
];

describe('the webhook address policy', () => {
  it('allows global unicast addresses only, judging an embedded IPv4 by its own rules', () => {
    for (const [address, why] of REFUSED) expect([address, why, isGlobalUnicast(address)]).toStrictEqual([address, why, false]);
    for (const address of ALLOWED) expect([address, isGlobalUnicast(address)]).toStrictEqual([address, true]);
  });

  it('refuses at registration the URLs whose host is not global, however spelled, and those parsers read differently', async () => {
    const dns = await startTestDns();
    onTestFinished(() => dns.close());
    dns.set('public.example.org', 'A', '93.184.216.34');
    dns.set('cgnat.example.org', 'A', '100.64.1.1');
    dns.set('nat64.example.org', 'AAAA', '64:ff9b::a9fe:a9fe');
    dns.set('mixed.example.org', 'A', ['93.184.216.34', '10.0.0.1']);
    const resolve = hostResolver(createDnsResolver([dns.address], 1000), true);
    const register = (url: string) => checkUrlAtRegistration(url, resolve, false);

    const refused: [string, RegExp][] = [
      // A backslash is a slash to the WHATWG parser (host 203.0.113.1), an ordinary userinfo character to others (host 127.0.0.1).
      ['http://203.0.113.1\\@127.0.0.1/', /backslash/],
      ['http://public.example.org\t@127.0.0.1/', /control character/],
      [' http://public.example.org/', /space/],
      ['http://public.example.org@127.0.0.1/', /resolves to 127\.0\.0\.1/],
      ['http://127.0.0.1#@public.example.org/', /resolves to 127\.0\.0\.1/],
      ['http://127.1/', /resolves to 127\.0\.0\.1/],
      ['http://0x7f.0.0.1/', /resolves to 127\.0\.0\.1/],
      ['http://017700000001/', /resolves to 127\.0\.0\.1/],
      ['http://0251.0376.0251.0376/', /resolves to 169\.254\.169\.254/],
      ['http://100.64.0.1/', /resolves to 100\.64\.0\.1/],
      ['http://198.18.0.1/', /resolves to 198\.18\.0\.1/],
      ['http://255.255.255.255/', /resolves to 255\.255\.255\.255/],
      ['http://224.0.0.251/', /resolves to 224\.0\.0\.251/],
      ['http://[::a9fe:a9fe]/', /resolves to ::a9fe:a9fe/],
      ['http://[::ffff:169.254.169.254]/', /resolves to ::ffff:a9fe:a9fe/],
      ['http://[64:ff9b::10.0.0.1]/', /resolves to 64:ff9b::a00:1/],
      ['http://[2002:c0a8:101::1]/', /resolves to 2002:c0a8:101::1/],
      ['http://[fec0::1]/', /resolves to fec0::1/],
      ['http://[ff02::1]/', /resolves to ff02::1/],
      ['http://cgnat.example.org/', /resolves to 100\.64\.1\.1/],
      ['http://nat64.example.org/', /resolves to 64:ff9b::a9fe:a9fe/],
      ['http://mixed.example.org/', /resolves to 10\.0\.0\.1/],
    ];
    for (const [url, why] of refused) {
      const error = await register(url).then(
        () => 'accepted',
        (err: Error) => err.message,
      );
      expect([url, error]).toStrictEqual([url, expect.stringMatching(why)]);
    }
    // What is accepted is stored in the one serialisation the poster parses again.
    expect(await register('https://public.example.org/hook?x=1')).toBe('https://public.example.org/hook?x=1');
    expect(await register('http://127.0.0.1@public.example.org/')).toBe('http://127.0.0.1@public.example.org/');
    expect(await register('http://[2606:4700:4700::1111]/')).toBe('http://[2606:4700:4700::1111]/');
  });

  it('checks at connect the address it connects to: a name re-pointed after registration is not reached', async () => {
    const dns: TestDns = await startTestDns();
    onTestFinished(() => dns.close());
    const receiver = await startReceiver();
    const port = new URL(receiver.url).port;
    const asked: string[] = [];
    const system = hostResolver(createDnsResolver([dns.address], 1000), true);
    const resolve: HostResolver = (host) => {
      asked.push(host);
      return system(host);
    };
    const poster = (allowPrivate: boolean) => {
      const p = new WebhookPoster({
        timeoutMs: 2000,
        lookup: policyLookup(resolve, allowPrivate),
        allowPrivateAddresses: allowPrivate,
        userAgent: 't',
        clock: new ManualClock(),
      });
      onTestFinished(() => p.close());
      return p;
    };
    const url = `http://hooks.example.org:${port}/hook`;

    // Registered while the name pointed at a public address...
    dns.set('hooks.example.org', 'A', '93.184.216.34');
    const stored = await checkUrlAtRegistration(url, resolve, false);
    // ...then re-pointed at this machine: the connect resolves again, checks, and refuses.
    dns.set('hooks.example.org', 'A', '127.0.0.1');
    const rebound = await poster(false).post(stored, '{}', 'whsec_x', 'evt_1');
    expect([rebound.ok, rebound.status, rebound.error]).toStrictEqual([
      false,
      null,
      expect.stringMatching(/^hooks\.example\.org resolves to 127\.0\.0\.1, not a global unicast address/),
    ]);
    // A public address beside a private one does not let the private one through.
    dns.set('hooks.example.org', 'A', ['93.184.216.34', '127.0.0.1']);
    expect((await poster(false).post(stored, '{}', 'whsec_x', 'evt_1')).error).toMatch(/resolves to 127\.0\.0\.1/);
    expect(receiver.requests).toHaveLength(0);
    // The host asked about at connect is the one checked at registration.
    expect(new Set(asked)).toStrictEqual(new Set(['hooks.example.org']));

    // Where private addresses are allowed, the connection goes to the address the lookup gave.
    dns.set('hooks.example.org', 'A', '127.0.0.1');
    const allowed = await poster(true).post(stored, '{}', 'whsec_x', 'evt_1');
    expect([allowed.ok, allowed.status]).toStrictEqual([true, 200]);
    expect(receiver.requests).toHaveLength(1);
  });
});
