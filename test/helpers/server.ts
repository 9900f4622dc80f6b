import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import type { Config } from '../../src/config/schema.ts';
import type { Clock, DnsResolver, RandomSource } from '../../src/core/ports.ts';
import type { Role } from '../../src/roles/index.ts';
import { startServer, type RunningServer } from '../../src/main.ts';
import { createLogger } from '../../src/log/logger.ts';
import { scratchStore, type ScratchStore, type StoreKind } from './stores.ts';

export interface TestServer extends RunningServer {
  url: string;
  store: ScratchStore;
  config: Config;
  /** A config file for CLI invocations against the same database. */
  configFile: string;
  /** Creates a workspace and returns its first key. */
  workspace(name?: string): Promise<{ id: number; apiKey: string }>;
  /** Adds a domain to a workspace and marks it verified (no DNS needed). */
  verifiedDomain(workspaceId: number, name: string): Promise<void>;
  /** A workspace sending from one verified domain, its rate limits out of the way. */
  sender(name: string, domain: string): Promise<{ id: number; apiKey: string }>;
  /** A fetch against the API with the key as bearer. */
  api(method: string, path: string, opts?: { key?: string; body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<ApiResponse>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

let counter = 0;

export function testConfig(store: ScratchStore, extra: Record<string, unknown> = {}): Config {
  return loadConfig({
    env: {},
    overrides: {
      ...store.config,
      server: { hostname: 'mail.mailsvc.test' },
      http: { host: '127.0.0.1', port: 0 },
      // Never a fixed port: test files run in parallel.
      inbound: { host: '127.0.0.1', port: 0 },
      submission: { host: '127.0.0.1', port: 0, tlsPort: 0 },
      log: { level: 'silent' },
      ...extra,
    },
  });
}

/** Starts the API in this process on port 0 over a scratch database; cleaned up after the test. */
export async function startTestServer(
  kind: StoreKind,
  opts: { clock?: Clock; dns?: DnsResolver; random?: RandomSource; config?: Record<string, unknown>; roles?: Role[] } = {},
): Promise<TestServer> {
  const store = await scratchStore(kind);
  const config = testConfig(store, opts.config);
  const server = await startServer(config, {
    roles: opts.roles ?? ['api'],
    overrides: { clock: opts.clock, dns: opts.dns, random: opts.random, log: createLogger('silent') },
  });
  const configFile = join(store.dataDir, 'config.json');
  writeFileSync(configFile, JSON.stringify({ ...store.config, server: { hostname: 'mail.mailsvc.test' }, log: { level: 'warn' }, ...(opts.config ?? {}) }));
  onTestFinished(async () => {
    await server.close();
    await store.drop();
  });

  const api: TestServer['api'] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    let body: string | undefined = o.raw;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${server.url}/api/v1${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };

  const verifiedDomain = async (workspaceId: number, name: string) => {
    await server.services.domains.add(workspaceId, name);
    await server.services.domains.forceVerify(null, name);
  };
  const workspace = async (name?: string) => {
    const { workspace, apiKey } = await server.services.tenancy.createWorkspace(name ?? `ws${++counter}`);
    return { id: workspace.id, apiKey };
  };
  return {
    ...server,
    url: server.url!,
    store,
    config,
    configFile,
    api,
    verifiedDomain,
    workspace,
    async sender(name, domain) {
      const ws = await workspace(name);
      await server.services.tenancy.setLimits(name, { perMinute: 1_000_000, perHour: 1_000_000 });
      await verifiedDomain(ws.id, domain);
      return ws;
    },
  };
}
