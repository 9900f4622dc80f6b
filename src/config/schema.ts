import { Type, type Static } from '@sinclair/typebox';

/** An IP address or a CIDR range, by its characters alone; whether it names one is checked after. */
const ADDRESS_OR_CIDR = '^[0-9A-Fa-f:.]+(/[0-9]{1,3})?$';
const port = (fallback: number) => Type.Integer({ minimum: 0, maximum: 65535, default: fallback });
const seconds = (fallback: number) => Type.Integer({ minimum: 1, default: fallback });
const proxyProtocol = (listener: string) =>
  Type.Object(
    {
      from: Type.Array(Type.String({ pattern: ADDRESS_OR_CIDR }), {
        default: [],
        expected: 'a JSON array of IP addresses or CIDRs',
        examples: [['127.0.0.1', '10.0.0.0/8']],
        description: `TCP proxies in front of the ${listener} listener: connections from them must start with a PROXY protocol header (v1 or v2) and count as the client it names; empty: none`,
      }),
    },
    { additionalProperties: false, default: {} },
  );
const Host = Type.String({ minLength: 1, expected: 'a host name', examples: ['mail.example.com'] });
/** A listener's address; null: every interface in live mode, loopback only in the sandbox. */
const listenHost = (listener: string) =>
  Type.Union([Type.String({ minLength: 1 }), Type.Null()], {
    default: null,
    expected: 'an IP address to listen on, or null',
    examples: ['0.0.0.0', '127.0.0.1'],
    description: `address the ${listener} listens on; null: 0.0.0.0 (every interface), or 127.0.0.1 when delivery.mode is sandbox`,
  });

/**
 * Every configuration key with its type, default and meaning. The `Config` type is derived
 * from this schema; defaults that depend on other keys (hostname, return-path domain, tracking
 * base URL, SQLite file) are `null` here and filled in by the loader.
 */
export const ConfigSchema = Type.Object(
  {
    dataDir: Type.String({ default: 'data', description: 'SQLite file, generated certificates' }),
    database: Type.Object(
      {
        client: Type.Union([Type.Literal('sqlite'), Type.Literal('pg')], { default: 'sqlite' }),
        connection: Type.Union([Type.String(), Type.Object({ filename: Type.String() }), Type.Null()], {
          default: null,
          expected: 'a PostgreSQL URL (client "pg"), {"filename": "PATH"} (client "sqlite"), or null',
          examples: ['postgres://mailsvc@db.example.com:5432/mailsvc'],
          description: 'pg: a connection string; sqlite: {filename}, default <dataDir>/mailsvc.sqlite',
        }),
        pool: Type.Integer({
          minimum: 2,
          maximum: 200,
          default: 10,
          description:
            'pg: connections per process (group commits run side by side on half of them, claims and reads use the rest); size the server for pool x processes',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    server: Type.Object(
      {
        hostname: Type.Union([Host, Type.Null()], {
          default: null,
          description: "EHLO name, Message-ID domain, MX target in DNS records; default: the machine's name",
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    http: Type.Object(
      {
        host: listenHost('HTTP API'),
        port: port(3000),
        bodyLimit: Type.Integer({ minimum: 1024, default: 10_485_760 }),
        trustProxy: Type.Array(Type.String({ pattern: ADDRESS_OR_CIDR }), {
          default: [],
          expected: 'a JSON array of IP addresses or CIDR ranges',
          examples: [['127.0.0.1', '10.0.0.0/8']],
          description:
            'reverse proxies whose X-Forwarded-For, -Host and -Proto are believed (client address for tracking limits and events, origin of console requests); empty: none, the socket address counts',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    submission: Type.Object(
      {
        host: listenHost('submission listeners'),
        port: port(1587),
        tlsPort: port(1465),
        maxSize: Type.Integer({ minimum: 1024, default: 26_214_400 }),
        allowInsecureAuth: Type.Boolean({ default: false }),
        loopbackInsecureAuth: Type.Boolean({ default: true }),
        maxConnections: Type.Integer({ minimum: 1, default: 500, description: 'connections in total on each submission port; the one over it gets 421' }),
        maxConnectionsPerAddress: Type.Integer({
          minimum: 1,
          default: 10,
          description:
            'connections one client address may hold on each port, TLS handshakes included; the one over it gets 421 (on tlsPort before the handshake: dropped)',
        }),
        proxyProtocol: proxyProtocol('submission'),
        trustedNetworks: Type.Array(
          Type.Object(
            {
              network: Type.String({ pattern: ADDRESS_OR_CIDR, expected: 'an IP address or CIDR', examples: ['10.0.0.0/8'] }),
              keyId: Type.Integer({ minimum: 1, description: 'the id of an API key (`mailsvc key list`): its workspace, domain scope and rate limits apply' }),
            },
            { additionalProperties: false },
          ),
          {
            default: [],
            expected: 'a JSON array of {"network": CIDR, "keyId": API key id}',
            examples: [[{ network: '10.1.2.0/24', keyId: 3 }]],
            description:
              'networks whose clients may submit without AUTH, each as the API key it names (printers, applications that cannot authenticate; the first entry that holds the client counts); a client that authenticates uses its own key; empty: AUTH always',
          },
        ),
        handshakeTimeoutMs: Type.Integer({
          minimum: 100,
          maximum: 300_000,
          default: 10_000,
          description: 'time a new connection has to send its PROXY header and, on tlsPort, to finish the TLS handshake',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    inbound: Type.Object(
      {
        host: listenHost('inbound MX'),
        port: port(2525),
        returnPathDomain: Type.Union([Host, Type.Null()], {
          default: null,
          description: 'global return-path domain; default bounces.<server.hostname>',
        }),
        maxSize: Type.Integer({ minimum: 1024, default: 10_485_760 }),
        parseWorkers: Type.Integer({ minimum: 1, maximum: 64, default: 2, description: 'worker threads parsing reports off the event loop' }),
        parseBudgetMs: Type.Integer({
          minimum: 1,
          maximum: 600_000,
          default: 2000,
          description: 'time one report may take to parse; over it the report is stored unparsed',
        }),
        parseQueue: Type.Integer({ minimum: 0, maximum: 10_000, default: 20, description: 'reports waiting for a parser; more get 451' }),
        dailyStoreBytesPerIp: Type.Integer({
          minimum: 0,
          default: 52_428_800,
          description: 'raw report bytes stored per sending IP per UTC day; past it reports are kept without their bytes',
        }),
        inlineAttachmentBytes: Type.Integer({
          minimum: 0,
          default: 1_048_576,
          description: 'a received message smaller than this carries its attachments inline (base64) in email.received; a larger one gives their URLs',
        }),
        maxConnections: Type.Integer({ minimum: 1, default: 200, description: 'connections in total; the one over it gets 421' }),
        maxConnectionsPerAddress: Type.Integer({ minimum: 1, default: 10, description: 'connections one client address may hold; the one over it gets 421' }),
        proxyProtocol: proxyProtocol('inbound'),
        handshakeTimeoutMs: Type.Integer({ minimum: 100, maximum: 300_000, default: 10_000, description: 'time a proxy has to send the PROXY header' }),
      },
      { additionalProperties: false, default: {} },
    ),
    tls: Type.Object(
      {
        cert: Type.Union([Type.String(), Type.Null()], { default: null, expected: 'a PEM file path or PEM text, or null', examples: ['/etc/mailsvc/cert.pem'] }),
        key: Type.Union([Type.String(), Type.Null()], { default: null, expected: 'a PEM file path or PEM text, or null', examples: ['/etc/mailsvc/key.pem'] }),
        trustedCAs: Type.Union([Type.String({ minLength: 1 }), Type.Null()], {
          default: null,
          expected: 'a PEM file path, or null',
          examples: ['/etc/mailsvc/private-ca.pem'],
          description: 'certificates trusted besides the system ones when delivery verifies TLS (MTA-STS policies and MX hosts, delivery.tls required): a private CA',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    dns: Type.Object(
      {
        servers: Type.Array(Type.String(), {
          default: [],
          description: 'e.g. ["127.0.0.1:5353"]; empty = system',
          expected: 'a JSON array of "IP" or "IP:port" strings',
          examples: [['127.0.0.1:5353']],
        }),
        timeout: Type.Integer({ minimum: 1, default: 5, description: 'seconds per query try' }),
      },
      { additionalProperties: false, default: {} },
    ),
    delivery: Type.Object(
      {
        mode: Type.Union([Type.Literal('live'), Type.Literal('sandbox')], {
          default: 'live',
          description: 'sandbox: nothing leaves the machine; messages land in the local inbox (mailsvc inbox list)',
        }),
        port: port(25),
        tls: Type.Union([Type.Literal('opportunistic'), Type.Literal('required')], { default: 'opportunistic' }),
        mtaSts: Type.Object(
          {
            enabled: Type.Boolean({ default: true, description: "follow recipient domains' MTA-STS policies (RFC 8461); false: never look them up" }),
            port: port(443),
            fetchTimeout: Type.Integer({
              minimum: 1,
              maximum: 60,
              default: 5,
              description: "seconds a policy fetch may take in all (connect, TLS, body); only its own domain's mail waits for it",
            }),
          },
          { additionalProperties: false, default: {} },
        ),
        relayHost: Type.Union([Type.String({ pattern: '^[^:\\s]+:[0-9]+$' }), Type.Null()], {
          default: null,
          expected: 'host:port (the port is required), or null',
          examples: ['smtp.example.com:587'],
        }),
        relayUser: Type.Union([Type.String(), Type.Null()], { default: null }),
        relayPassword: Type.Union([Type.String(), Type.Null()], { default: null }),
        maxConnectionsPerHost: Type.Integer({ minimum: 1, default: 10 }),
        concurrency: Type.Integer({ minimum: 1, default: 50, description: 'transactions in flight per process' }),
        signingThreads: Type.Union([Type.Integer({ minimum: 0, maximum: 64 }), Type.Null()], {
          default: null,
          expected: 'a whole number from 0 to 64, or null',
          description: 'worker threads that build and DKIM-sign the copies; null: one per available core but one, at least one; 0: on the event loop',
        }),
        // 1m, 5m, 15m, 30m, 1h, 2h, 4h, 8h: cumulative 16h 51m after the 8th retry; the last repeats.
        retrySchedule: Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1, default: [60, 300, 900, 1800, 3600, 7200, 14400, 28800] }),
        maxAge: seconds(259_200),
        leaseSeconds: seconds(30),
        sourceAddresses: Type.Array(
          Type.Object(
            {
              address: Type.String({ pattern: '^[0-9A-Fa-f:.]+$', expected: 'an IPv4 or IPv6 address of this machine', examples: ['203.0.113.10'] }),
              ehlo: Type.String({ minLength: 1, expected: 'the host name its PTR record names', examples: ['mta1.example.com'] }),
            },
            { additionalProperties: false },
          ),
          { default: [], description: 'outbound connections bind one of these and greet with its name; empty: the kernel picks, EHLO server.hostname' },
        ),
        pools: Type.Record(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]*$' }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }), {
          default: {},
          expected: 'an object of pool names to lists of source addresses',
          examples: [{ transactional: ['203.0.113.10'], broadcast: ['203.0.113.11', '203.0.113.12'] }],
          description: 'named sets of source addresses; a workspace, a domain or a stream names one (the most specific wins); default: every address',
        }),
        streamPools: Type.Object(
          {
            transactional: Type.Optional(Type.String({ minLength: 1 })),
            broadcast: Type.Optional(Type.String({ minLength: 1 })),
          },
          { additionalProperties: false, default: {}, description: 'the pool each stream sends from unless its workspace or domain names one' },
        ),
        warmup: Type.Record(
          Type.String({ minLength: 1 }),
          Type.Object(
            {
              start: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', expected: 'a UTC day, YYYY-MM-DD', examples: ['2026-12-01'] }),
              schedule: Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1, examples: [[50, 100, 200, 500, 1000, 2000, 5000]] }),
            },
            { additionalProperties: false },
          ),
          {
            default: {},
            description: 'per source address: on day k after start it sends at most schedule[k] messages to each destination group (the last number repeats)',
          },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    tracking: Type.Object(
      {
        baseUrl: Type.Union([Type.String({ pattern: '^https?://' }), Type.Null()], {
          default: null,
          expected: 'an http:// or https:// URL, or null',
          examples: ['https://mail.example.com'],
          description: 'public base of /t/... links; default http://<hostname>:<http.port>',
        }),
        maxLinksPerMessage: Type.Integer({
          minimum: 0,
          default: 5000,
          description:
            'links click tracking would rewrite in one message (counted at accept whether or not the domain tracks now); a message with more is refused with 422',
        }),
        maxRenderedBytes: Type.Integer({
          minimum: 1024,
          default: 12_582_912,
          description:
            "bytes of one recipient's rendered text parts (tracked links, open pixel, unsubscribe URLs filled in); a message whose render could exceed it is refused with 422",
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    webhooks: Type.Object(
      {
        // 10s, 1m, 5m, 30m, 2h, 6h, 12h, 24h: cumulative ~44h 36m before an event is given up.
        retrySchedule: Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1, default: [10, 60, 300, 1800, 7200, 21600, 43200, 86400] }),
        timeout: seconds(10),
        pauseAfter: Type.Integer({ minimum: 1, default: 10 }),
        probeInterval: seconds(300),
        disableAfter: seconds(259_200),
        allowPrivateAddresses: Type.Boolean({ default: false }),
      },
      { additionalProperties: false, default: {} },
    ),
    suppression: Type.Object(
      {
        importMaxRows: Type.Integer({
          minimum: 1,
          default: 250_000,
          description: 'lines after the header one POST /suppressions/import may hold; over it the call is refused with 413 and nothing is imported',
        }),
        importChunkRows: Type.Integer({
          minimum: 1,
          maximum: 4000,
          default: 500,
          description: 'entries an import writes per short transaction of their own; other writers go between two',
        }),
        exportPageRows: Type.Integer({
          minimum: 1,
          maximum: 10_000,
          default: 500,
          description: 'entries an export reads per query and writes to the reply before reading more',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    shaping: Type.Object(
      {
        defaults: Type.Object(
          {
            connections: Type.Integer({ minimum: 1, default: 10, description: 'concurrent connections per destination group (per process)' }),
            perMinute: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
              default: null,
              expected: 'a whole number of messages, or null (unlimited)',
              description: 'messages per minute per destination group, across every process',
            }),
            perConnection: Type.Integer({ minimum: 1, default: 100, description: 'messages sent on one connection before it is closed' }),
          },
          { additionalProperties: false, default: {} },
        ),
        providers: Type.Array(
          Type.Object(
            {
              name: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]*$', expected: 'a lowercase name', examples: ['google'] }),
              mx: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, expected: 'MX host name suffixes', examples: [['google.com', 'googlemail.com']] }),
              connections: Type.Optional(Type.Integer({ minimum: 1 })),
              perMinute: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
              perConnection: Type.Optional(Type.Integer({ minimum: 1 })),
            },
            { additionalProperties: false },
          ),
          { default: [], description: 'provider rules tried before the built-in ones (docs/SHAPING.md)' },
        ),
        rules: Type.Array(
          Type.Object(
            {
              match: Type.String({ minLength: 1, expected: 'a substring, or /regex/i', examples: ['4.7.28', '/^421 .*try again later/i'] }),
              action: Type.Union([Type.Literal('suspend'), Type.Literal('throttle'), Type.Literal('reconnect-later'), Type.Literal('pause-address')]),
              seconds: Type.Integer({ minimum: 1, maximum: 86_400 }),
            },
            { additionalProperties: false },
          ),
          { default: [], description: 'reply rules tried before the built-in ones (docs/SHAPING.md)' },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    retention: Type.Object({ days: Type.Integer({ minimum: 1, default: 30 }) }, { additionalProperties: false, default: {} }),
    compliance: Type.Object(
      {
        pauseBroadcastAt: Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 100 }), Type.Null()], {
          default: 0.3,
          expected: 'a complaint rate in percent (0.3 means 0.3%), or null',
          examples: [0.3, null],
          description:
            "complaint rate in percent over 7 days at which a sending domain's broadcast stream is held until an operator releases it (docs/COMPLIANCE.md); null: never",
        }),
        pauseMinDelivered: Type.Integer({
          minimum: 1,
          default: 1000,
          description: 'delivered broadcast recipients in the 7 days a domain needs before its complaint rate can hold it: one complaint about one message is no rate',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    log: Type.Object(
      {
        level: Type.Union(
          ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
          { default: 'info' },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

type RawConfig = Static<typeof ConfigSchema>;

/** The validated configuration with every derived default resolved. */
export type Config = Readonly<
  Omit<RawConfig, 'server' | 'http' | 'submission' | 'inbound' | 'tracking' | 'database'> & {
    server: { hostname: string };
    http: RawConfig['http'] & { host: string };
    submission: RawConfig['submission'] & { host: string };
    inbound: RawConfig['inbound'] & { returnPathDomain: string; host: string };
    tracking: RawConfig['tracking'] & { baseUrl: string };
    database: { client: 'sqlite'; connection: { filename: string }; pool: number } | { client: 'pg'; connection: string; pool: number };
  }
>;
