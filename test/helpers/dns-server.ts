import type { AddressInfo, Socket } from 'node:net';
import dns2 from 'dns2';
import type { MxRecord } from '../../src/core/ports.ts';

const { Packet } = dns2;

export type TestRecordType = 'A' | 'AAAA' | 'MX' | 'TXT' | 'PTR';

/** What each record type takes: addresses, MX records, whole TXT strings (chunked on the wire), or the name a PTR points to. */
export interface TestRecords {
  A: string;
  AAAA: string;
  MX: MxRecord;
  TXT: string;
  PTR: string;
}

export interface TestDns {
  /** `127.0.0.1:PORT`, ready for `dns.servers` / `createDnsResolver([...])`. */
  address: string;
  port: number;
  /** Replaces the records of one type for a name; the name then exists in the zone. */
  set<T extends TestRecordType>(name: string, type: T, records: TestRecords[T] | TestRecords[T][]): void;
  /** Answers SERVFAIL for queries about the name (of one type only, when given). */
  servfail(name: string, type?: TestRecordType): void;
  /** Never answers queries about the name, so the client runs into its timeout. */
  drop(name: string): void;
  /** Forgets one name (records, failures), or the whole zone. */
  clear(name?: string): void;
  close(): Promise<void>;
  /** Every question received, in order; names lowercased without the trailing dot. */
  queries: { name: string; type: string }[];
}

const TYPE_CODES: Record<TestRecordType, number> = {
  A: Packet.TYPE.A,
  AAAA: Packet.TYPE.AAAA,
  MX: Packet.TYPE.MX,
  TXT: Packet.TYPE.TXT,
  PTR: Packet.TYPE.PTR,
};

// RFC 1035 §4.1.1 response codes (present at runtime on Packet.RCODE, missing from its types).
const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3 } as const;

function typeName(code: number): string {
  const entry = Object.entries(Packet.TYPE).find(([, value]) => value === code);
  return entry ? entry[0] : String(code);
}

function normalise(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** RFC 1035 §3.3.14: a TXT record is a sequence of character-strings of at most 255 octets. */
function chunkTxt(text: string): Buffer[] {
  const bytes = Buffer.from(text, 'utf8');
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 255) chunks.push(bytes.subarray(i, i + 255));
  return chunks.length > 0 ? chunks : [Buffer.alloc(0)];
}

interface ZoneEntry {
  records: Map<number, unknown[]>;
  failure?: 'servfail' | 'drop';
  servfailTypes?: Set<number>;
}

type Request = InstanceType<typeof Packet>;
type Resource = Request['answers'][number];
type Send = (response: InstanceType<typeof Packet>) => Promise<Buffer>;

/**
 * A real authoritative-style DNS server on 127.0.0.1, UDP and TCP on the same ephemeral port
 * (c-ares retries over TCP when a UDP answer comes back truncated, e.g. a long DKIM key).
 * Unknown names answer NXDOMAIN; a known name without records of the asked type answers
 * NOERROR with an empty answer section (NODATA).
 */
export async function startTestDns(): Promise<TestDns> {
  const zone = new Map<string, ZoneEntry>();
  const queries: { name: string; type: string }[] = [];

  const entry = (name: string): ZoneEntry => {
    const key = normalise(name);
    let found = zone.get(key);
    if (!found) {
      found = { records: new Map() };
      zone.set(key, found);
    }
    return found;
  };

  const handle = (request: Request, send: Send): void => {
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    const question = request.questions[0];
    if (!question) {
      response.header.rcode = RCODE.FORMERR;
      void send(response).catch(() => undefined);
      return;
    }
    const name = normalise(question.name);
    queries.push({ name, type: typeName(question.type) });
    const found = zone.get(name);
    if (found?.failure === 'drop') return;
    if (found?.failure === 'servfail' || found?.servfailTypes?.has(question.type)) {
      response.header.rcode = RCODE.SERVFAIL;
    } else if (!found) {
      response.header.rcode = RCODE.NXDOMAIN;
    } else {
      for (const data of found.records.get(question.type) ?? []) {
        const base = { name: question.name, type: question.type, class: Packet.CLASS.IN, ttl: 60 };
        // Packet.toBuffer encodes plain objects with Resource.encode, keyed by `type`.
        response.answers.push({ ...base, ...(data as object) } as Resource);
      }
    }
    // A client that gave up or closed its TCP stream is not the server's problem.
    void send(response).catch(() => undefined);
  };

  const tcp = dns2.createTCPServer(handle as never);
  const sockets = new Set<Socket>();
  tcp.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // A resolver falls back to TCP on the port it asked over UDP. A port free on UDP is now and
  // then taken on TCP (another test's listener): then both are opened again on another port.
  let udp = dns2.createUDPServer(handle as never);
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    await udp.listen(0, '127.0.0.1');
    port = (udp.address() as AddressInfo).port;
    const bound = await new Promise<boolean>((resolve) => {
      const failed = () => resolve(false);
      tcp.once('error', failed);
      tcp.listen(port, '127.0.0.1', () => {
        tcp.off('error', failed);
        resolve(true);
      });
    });
    if (bound || attempt === 20) break;
    await new Promise<void>((resolve) => udp.close(() => resolve()));
    udp = dns2.createUDPServer(handle as never);
  }

  const toWire = (type: TestRecordType, record: unknown): unknown => {
    if (type === 'TXT') return { data: chunkTxt(record as string) };
    if (type === 'PTR') return { domain: record as string };
    if (type === 'MX') {
      const mx = record as MxRecord;
      return { exchange: mx.exchange, priority: mx.priority };
    }
    return { address: record as string };
  };

  return {
    address: `127.0.0.1:${port}`,
    port,
    queries,
    set(name, type, records) {
      const list = (Array.isArray(records) ? records : [records]) as unknown[];
      const target = entry(name);
      delete target.failure;
      target.records.set(
        TYPE_CODES[type],
        list.map((record) => toWire(type, record)),
      );
    },
    servfail(name, type) {
      const target = entry(name);
      if (type === undefined) target.failure = 'servfail';
      else (target.servfailTypes ??= new Set()).add(TYPE_CODES[type]);
    },
    drop(name) {
      entry(name).failure = 'drop';
    },
    clear(name) {
      if (name === undefined) zone.clear();
      else zone.delete(normalise(name));
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        tcp.listening ? new Promise<void>((resolve) => tcp.close(() => resolve())) : Promise.resolve(),
      ]);
    },
  };
}
