import { describe, expect, it } from 'vitest';
import { clientKey, ConnectionLimiter } from '../../src/ratelimit/connections.ts';

describe('the key a client is counted under', () => {
  it('is the IPv4 address (mapped or not), or the /64 of an IPv6 address however it is written', () => {
    expect(clientKey('192.0.2.7')).toBe('192.0.2.7');
    expect(clientKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    const same = ['2001:db8:1:1::1', '2001:0db8:0001:0001:ffff:ffff:ffff:ffff', '2001:DB8:1:1:0:0:0:9', '2001:db8:1:1::192.0.2.1'].map(clientKey);
    expect(new Set(same)).toStrictEqual(new Set(['2001:db8:1:1::/64']));
    expect(clientKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('fe80::1')).toBe('fe80:0:0:0::/64');
  });

  it('is what the connection limiter counts', () => {
    const limiter = new ConnectionLimiter(2);
    expect([limiter.admit('a', '2001:db8::1'), limiter.admit('b', '2001:db8::2'), limiter.admit('c', '2001:db8::3')]).toStrictEqual([true, true, false]);
    expect(limiter.admit('d', '2001:db8:0:1::1')).toBe(true);
    limiter.release('a');
    expect(limiter.open('2001:db8::77')).toBe(1);
  });
});
