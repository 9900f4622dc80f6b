import { isIP } from 'node:net';

/** An IP address or CIDR range as its parts: a lone address is a range of one. */
export interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** `"10.0.0.0/8"`, `"::1"`: its parts, or null when the entry names no address or range. */
export function parseCidr(entry: string): Cidr | null {
  const [address, bits, extra] = entry.split('/');
  const family = isIP(address ?? '');
  const max = family === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (family === 0 || extra !== undefined || bits === '' || !Number.isInteger(prefix) || prefix < 0 || prefix > max) return null;
  return { address: address!, prefix, family: family === 4 ? 'ipv4' : 'ipv6' };
}
