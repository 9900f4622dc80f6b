import { describe, expect, it } from 'vitest';
import { addressMatcher } from '../../src/listeners/guard.ts';
import { PROXY_HEADER_MAX, readProxyHeader } from '../../src/listeners/proxy-header.ts';

const SIGNATURE = [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a];
const v2 = (command: number, family: number, body: number[]) => Buffer.from([...SIGNATURE, 0x20 | command, family, body.length >> 8, body.length & 0xff, ...body]);

describe('reading a PROXY protocol header', () => {
  it('v1: TCP4, TCP6 and UNKNOWN, with what follows left to the client', () => {
    const line = 'PROXY TCP4 192.0.2.7 127.0.0.1 40000 587\r\n';
    expect(readProxyHeader(Buffer.from(`${line}EHLO x\r\n`))).toStrictEqual({ length: line.length, client: { address: '192.0.2.7', port: 40000 } });
    expect(readProxyHeader(Buffer.from('PROXY TCP6 2001:db8::1 ::1 1 2\r\n'))).toMatchObject({ client: { address: '2001:db8::1', port: 1 } });
    expect(readProxyHeader(Buffer.from('PROXY UNKNOWN\r\n'))).toStrictEqual({ length: 15, client: null });
  });

  it('v2: PROXY over IPv4 and IPv6 (an IPv4-mapped one as IPv4), LOCAL as the proxy itself, TLVs skipped', () => {
    const four = v2(1, 0x11, [192, 0, 2, 7, 127, 0, 0, 1, 0x9c, 0x40, 0x02, 0x4b, 0x03, 0x00, 0x01, 0x00]);
    expect(readProxyHeader(Buffer.concat([four, Buffer.from('EHLO')]))).toStrictEqual({ length: four.length, client: { address: '192.0.2.7', port: 40000 } });
    const six = v2(1, 0x21, [0x20, 0x01, 0x0d, 0xb8, ...Array(11).fill(0), 1, ...Array(15).fill(0), 1, 0, 25, 0, 25]);
    expect(readProxyHeader(six)).toMatchObject({ client: { address: '2001:db8:0:0:0:0:0:1', port: 25 } });
    const mapped = v2(1, 0x21, [...Array(10).fill(0), 0xff, 0xff, 198, 51, 100, 1, ...Array(16).fill(0), 0, 25, 0, 25]);
    expect(readProxyHeader(mapped)).toMatchObject({ client: { address: '198.51.100.1' } });
    expect(readProxyHeader(v2(0, 0x00, []))).toStrictEqual({ length: 16, client: null });
  });

  it('says incomplete for every prefix of a good header, and refuses what is not one', () => {
    const line = Buffer.from('PROXY TCP4 192.0.2.7 127.0.0.1 40000 587\r\n');
    const four = v2(1, 0x11, [192, 0, 2, 7, 127, 0, 0, 1, 0, 1, 0, 2]);
    for (const whole of [line, four]) for (let n = 0; n < whole.length; n++) expect(readProxyHeader(whole.subarray(0, n))).toBe('incomplete');
    for (const bad of [
      'EHLO x\r\n',
      'PROXY TCP4 192.0.2.7 ::1 1 2\r\n',
      'PROXY TCP4 192.0.2.7 127.0.0.1 99999 2\r\n',
      'PROXY UDP4 a b 1 2\r\n',
      'PROXY TCP4 1.2.3.4 1.2.3.4 1 2\n',
    ]) {
      expect(readProxyHeader(Buffer.from(bad))).toHaveProperty('problem');
    }
    expect(readProxyHeader(Buffer.from(`PROXY ${'x'.repeat(200)}`))).toStrictEqual({ problem: 'PROXY v1 line over 107 bytes' });
    const huge = v2(1, 0x11, []);
    huge.writeUInt16BE(PROXY_HEADER_MAX, 14);
    expect(readProxyHeader(huge)).toHaveProperty('problem');
    expect(readProxyHeader(v2(1, 0x12, Array(12).fill(1)))).toHaveProperty('problem');
    expect(readProxyHeader(Buffer.from([...SIGNATURE, 0x31, 0x11, 0, 0]))).toHaveProperty('problem');
  });

  it('matches proxies by address or CIDR, IPv4-mapped peers included, and refuses a list entry that is neither', () => {
    const proxy = addressMatcher(['127.0.0.1', '10.0.0.0/8', 'fd00::/8']);
    expect(['127.0.0.1', '::ffff:127.0.0.1', '10.1.2.3', 'fd12::1'].map(proxy)).toStrictEqual([true, true, true, true]);
    expect(['127.0.0.2', '11.0.0.1', '::1', undefined].map(proxy)).toStrictEqual([false, false, false, false]);
    expect(() => addressMatcher(['10.0.0.0/33'])).toThrow(/not an IP address or CIDR/);
    expect(() => addressMatcher(['example.com'])).toThrow(/not an IP address or CIDR/);
  });
});
