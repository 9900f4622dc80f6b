// What every bench sets up the same way: a silent configuration on a scratch data directory
// (PostgreSQL when MAILSVC_BENCH_PG_URL is set, else SQLite), and a workspace with a verified
// sending domain and limits high enough never to be the bottleneck.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/load.ts';
import type { Config } from '../src/config/schema.ts';
import type { Services } from '../src/services.ts';

export const benchPgUrl = process.env.MAILSVC_BENCH_PG_URL;

export interface BenchConfig {
  config: Config;
  /** Removes the scratch data directory. */
  cleanUp(): void;
}

export function benchConfig(overrides: Record<string, unknown> = {}): BenchConfig {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailsvc-bench-'));
  const config = loadConfig({
    env: {},
    overrides: {
      dataDir,
      database: benchPgUrl ? { client: 'pg', connection: benchPgUrl } : { client: 'sqlite', connection: null },
      server: { hostname: 'mail.bench.test' },
      log: { level: 'silent' },
      ...overrides,
    },
  });
  return { config, cleanUp: () => rmSync(dataDir, { recursive: true, force: true }) };
}

/** A fresh workspace sending from `bench<id>.test`, verified, with limits out of the way. */
export async function benchSender(services: Services): Promise<{ apiKey: string; domain: string; workspaceId: number }> {
  const { workspace, apiKey } = await services.tenancy.createWorkspace(`bench${Date.now()}`);
  await services.tenancy.setLimits(workspace.name, { perMinute: 10_000_000, perHour: 10_000_000 });
  const domain = `bench${workspace.id}.test`;
  await services.domains.add(workspace.id, domain);
  await services.domains.forceVerify(null, domain);
  return { apiKey, domain, workspaceId: workspace.id };
}
