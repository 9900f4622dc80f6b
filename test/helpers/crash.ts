import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createServices } from '../../src/services.ts';
import { startTestDns, type TestDns } from './dns-server.ts';
import { startSmtpSink, type SmtpSink } from './smtp-sink.ts';
import { scratchStore, type StoreKind } from './stores.ts';

// What the crash tests share: a destination to deliver to, a config file for the `mailsvc serve`
// children they kill and restart, and a sender set up before the first child starts.

/** The test DNS with `dest.test` pointing at a sink on loopback; both closed when the test ends. */
export async function crashDestination(): Promise<{ dns: TestDns; sink: SmtpSink }> {
  const dns = await startTestDns();
  const sink = await startSmtpSink({ waitTimeoutMs: 60_000 });
  onTestFinished(async () => {
    await sink.close();
    await dns.close();
  });
  dns.set('dest.test', 'MX', { exchange: 'mx.dest.test', priority: 10 });
  dns.set('mx.dest.test', 'A', '127.0.0.1');
  return { dns, sink };
}

/** A scratch store (dropped when the test ends) and a config file on it with `settings` on top. */
export async function crashConfigFile(kind: StoreKind, settings: Record<string, unknown>): Promise<string> {
  const store = await scratchStore(kind);
  onTestFinished(() => store.drop());
  const configFile = join(store.dataDir, 'config.json');
  writeFileSync(configFile, JSON.stringify({ ...store.config, server: { hostname: 'mail.crash.test' }, http: { host: '127.0.0.1' }, ...settings }));
  return configFile;
}

/** Workspace `crash` sending from a verified acme.test with limits out of the way; its API key. */
export async function crashSender(configFile: string): Promise<string> {
  const setup = await createServices(loadConfig({ file: configFile, env: {} }), { log: createLogger('silent') });
  try {
    const { workspace, apiKey } = await setup.tenancy.createWorkspace('crash');
    await setup.tenancy.setLimits('crash', { perMinute: 100_000, perHour: 1_000_000 });
    await setup.domains.add(workspace.id, 'acme.test');
    await setup.domains.forceVerify(null, 'acme.test');
    return apiKey;
  } finally {
    await setup.close();
  }
}
