import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createServices, type Services } from '../../src/services.ts';
import { crashDestination } from './crash.ts';
import { spawnServe } from './process.ts';
import type { TestDns } from './dns-server.ts';
import type { SmtpSink } from './smtp-sink.ts';
import { scratchStore } from './stores.ts';

// Several `mailsvc serve` processes on one PostgreSQL database, as an operator runs them on
// several machines: each its own OS process with its own HTTP port and its own EHLO name (so
// the sink can tell who delivered what), all delivering to one SMTP sink through one test DNS.

/**
 * The scale tests need PostgreSQL: SQLite is one writer on one machine. Without
 * MAILSVC_TEST_PG_URL they skip and say why; with MAILSVC_TEST_REQUIRE_PG set (CI sets it)
 * a missing PostgreSQL fails them instead, so they never skip silently there.
 */
export const CLUSTER_PG = process.env.MAILSVC_TEST_PG_URL;
if (!CLUSTER_PG) {
  if (process.env.MAILSVC_TEST_REQUIRE_PG) throw new Error('MAILSVC_TEST_REQUIRE_PG is set but MAILSVC_TEST_PG_URL is not: the scale tests need PostgreSQL');
  console.warn('scale tests skipped: they need PostgreSQL (set MAILSVC_TEST_PG_URL=postgres://USER@HOST:PORT/DB)');
}

export interface ClusterNode {
  index: number;
  child: ChildProcess;
  url: string;
  /** The EHLO name it delivers with: `node<index>.scale.test`. */
  helo: string;
  /** Its PostgreSQL sessions carry this application_name. */
  appName: string;
  /** The last 64 KB of its log. */
  log(): string;
  /** SIGKILL, then resolves once it has exited. */
  kill(): Promise<void>;
  /** SIGTERM, then resolves with its exit code. */
  stop(): Promise<number | null>;
}

export interface Cluster {
  nodes: ClusterNode[];
  dns: TestDns;
  sink: SmtpSink;
  /** Services over the same database in this process, for set-up and for checking the rows. */
  services: Services;
  /** An API key of workspace `scale`, sending from the verified acme.test. */
  apiKey: string;
  workspaceId: number;
  /** POST /api/v1/emails to node `i`. */
  send(i: number, body: Record<string, unknown>, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  /** How many of the sink's messages each node delivered, by node index. */
  deliveredBy(): number[];
}

export interface ClusterOptions {
  nodes?: number;
  /** Config on top of the defaults (deep-merged one level: `{delivery: {...}}` adds to delivery). */
  settings?: Record<string, Record<string, unknown>>;
  roles?: string;
  /** Limits of workspace `scale` (default: out of the way). */
  limits?: { perMinute: number; perHour: number };
}

const TAIL = 64 * 1024;

/** Starts `nodes` serve processes (default 3) on a scratch PostgreSQL database; all stopped and dropped when the test ends. */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const { dns, sink } = await crashDestination();
  const store = await scratchStore('pg');
  onTestFinished(() => store.drop());
  const base = {
    ...store.config,
    http: { host: '127.0.0.1' },
    log: { level: 'info' },
    dns: { servers: [dns.address], timeout: 2 },
    ...options.settings,
    delivery: { port: sink.port, leaseSeconds: 5, ...options.settings?.delivery },
    webhooks: { allowPrivateAddresses: true, ...options.settings?.webhooks },
  };
  const setupFile = join(store.dataDir, 'config.json');
  writeFileSync(setupFile, JSON.stringify({ ...base, server: { hostname: 'setup.scale.test' } }));
  const services = await createServices(loadConfig({ file: setupFile, env: {} }), { log: createLogger('silent') });
  onTestFinished(() => services.close());
  const { workspace, apiKey } = await services.tenancy.createWorkspace('scale');
  await services.tenancy.setLimits('scale', options.limits ?? { perMinute: 1_000_000, perHour: 10_000_000 });
  await services.domains.add(workspace.id, 'acme.test');
  await services.domains.forceVerify(null, 'acme.test');

  const nodes = await Promise.all(
    Array.from({ length: options.nodes ?? 3 }, (_, index) => {
      const appName = `scale-node-${index}`;
      const url = new URL(store.config.database.connection as string);
      url.searchParams.set('application_name', appName);
      const file = join(store.dataDir, `node${index}.json`);
      writeFileSync(file, JSON.stringify({ ...base, database: { client: 'pg', connection: url.toString() }, server: { hostname: `node${index}.scale.test` } }));
      return spawnNode(index, file, appName, options.roles ?? 'api,delivery,webhooks');
    }),
  );

  return {
    nodes,
    dns,
    sink,
    services,
    apiKey,
    workspaceId: workspace.id,
    async send(i, body, headers = {}) {
      const res = await fetch(`${nodes[i]!.url}/api/v1/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    deliveredBy() {
      const counts = nodes.map(() => 0);
      for (const m of sink.messages) {
        const i = nodes.findIndex((n) => n.helo === m.helo);
        if (i >= 0) counts[i]!++;
      }
      return counts;
    },
  };
}

async function spawnNode(index: number, configFile: string, appName: string, roles: string): Promise<ClusterNode> {
  const node = await spawnServe(configFile, ['--roles', roles], { tailChars: TAIL }).catch((err: Error) => {
    throw new Error(`node ${index}: ${err.message}`);
  });
  return { ...node, index, helo: `node${index}.scale.test`, appName };
}

/** Addresses the sink received, with how many times each. */
export function arrivals(sink: SmtpSink): Map<string, number> {
  const seen = new Map<string, number>();
  for (const m of sink.messages) for (const to of m.to) seen.set(to, (seen.get(to) ?? 0) + 1);
  return seen;
}
