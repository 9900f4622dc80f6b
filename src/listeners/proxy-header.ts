import { isIP } from 'node:net';

/**
 * The PROXY protocol header (HAProxy's proxy-protocol.txt, versions 1 and 2) that a TCP proxy
 * writes before the client's first byte, naming the client it accepted. Pure: bytes in, the
 * client out. Every call looks at no more than `PROXY_HEADER_MAX` bytes, so a peer that trickles
 * bytes costs at most that much per chunk, and one that never finishes is stopped by the
 * caller's deadline.
 */

/** Version 1 is one text line of at most 107 bytes with its CRLF. */
const V1_MAX = 107;
/** Version 2's fixed part: the 12-byte signature, version and command, family, length. */
const V2_FIXED = 16;
/** Addresses plus the TLVs a proxy may add (TLS details, unique id); more is not a header we read. */
const V2_MAX_PAYLOAD = 1024;
export const PROXY_HEADER_MAX = V2_FIXED + V2_MAX_PAYLOAD;

const V1_PREFIX = Buffer.from('PROXY ', 'latin1');
const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);

export interface ProxyHeader {
  /** Bytes the header took; what follows is the client's. */
  length: number;
  /** The client the proxy speaks for; null when it speaks for itself (v2 LOCAL, v1 UNKNOWN, v2 UNSPEC or UNIX). */
  client: { address: string; port: number } | null;
}

export type ProxyHeaderRead = ProxyHeader | 'incomplete' | { problem: string };

/** Whether `data` is, so far, a prefix of `expected` (or starts with all of it). */
function startsLike(data: Buffer, expected: Buffer): boolean {
  const n = Math.min(data.length, expected.length);
  return data.subarray(0, n).equals(expected.subarray(0, n));
}

export function readProxyHeader(data: Buffer): ProxyHeaderRead {
  if (data.length === 0) return 'incomplete';
  if (startsLike(data, V2_SIGNATURE)) return readV2(data);
  if (startsLike(data, V1_PREFIX)) return readV1(data);
  return { problem: 'not a PROXY protocol header' };
}

const PORT = /^(?:0|[1-9][0-9]{0,4})$/;
const portOf = (text: string): number | null => (PORT.test(text) && Number(text) <= 65535 ? Number(text) : null);

function readV1(data: Buffer): ProxyHeaderRead {
  const lf = data.subarray(0, V1_MAX).indexOf(0x0a);
  if (lf < 0) return data.length >= V1_MAX ? { problem: 'PROXY v1 line over 107 bytes' } : 'incomplete';
  if (lf === 0 || data[lf - 1] !== 0x0d) return { problem: 'PROXY v1 line does not end in CRLF' };
  const parts = data
    .subarray(0, lf - 1)
    .toString('latin1')
    .split(' ');
  const length = lf + 1;
  if (parts[1] === 'UNKNOWN') return { length, client: null };
  if (parts.length !== 6) return { problem: 'PROXY v1 line is not PROXY TCP4|TCP6 source destination sport dport' };
  const [, family, source, destination, sourcePort, destinationPort] = parts as [string, string, string, string, string, string];
  const version = family === 'TCP4' ? 4 : family === 'TCP6' ? 6 : 0;
  if (version === 0) return { problem: `PROXY v1 protocol ${family.slice(0, 10)} is not TCP4, TCP6 or UNKNOWN` };
  const port = portOf(sourcePort);
  if (isIP(source) !== version || isIP(destination) !== version || port === null || portOf(destinationPort) === null) {
    return { problem: 'PROXY v1 addresses or ports are malformed' };
  }
  return { length, client: { address: source, port } };
}

function ipv6(bytes: Buffer): string {
  // An IPv4 client of a dual-stack proxy is the IPv4 address: the limits count it as such.
  if (bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return [...bytes.subarray(12)].join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  return groups.join(':');
}

function readV2(data: Buffer): ProxyHeaderRead {
  if (data.length < V2_FIXED) return 'incomplete';
  const versionCommand = data[12]!;
  if (versionCommand >> 4 !== 2) return { problem: 'PROXY v2 header of an unknown version' };
  const command = versionCommand & 0x0f;
  if (command > 1) return { problem: 'PROXY v2 command is neither LOCAL nor PROXY' };
  const family = data[13]!;
  const payload = data.readUInt16BE(14);
  if (payload > V2_MAX_PAYLOAD) return { problem: `PROXY v2 header over ${PROXY_HEADER_MAX} bytes` };
  const length = V2_FIXED + payload;
  if (data.length < length) return 'incomplete';
  // LOCAL: the proxy's own connection (a health check); UNSPEC and UNIX carry no client address we can count.
  if (command === 0 || family === 0x00 || family >> 4 === 3) return { length, client: null };
  const body = data.subarray(V2_FIXED, length);
  if (family === 0x11 && payload >= 12) return { length, client: { address: [...body.subarray(0, 4)].join('.'), port: body.readUInt16BE(8) } };
  if (family === 0x21 && payload >= 36) return { length, client: { address: ipv6(body.subarray(0, 16)), port: body.readUInt16BE(32) } };
  return { problem: 'PROXY v2 header is not TCP over IPv4 or IPv6' };
}
