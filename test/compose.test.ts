// compose.yaml's one documented step, `docker compose up --build`, checked without Docker: every
// name it uses refers to something a clean checkout has or compose creates, each node's
// environment is a configuration mailsvc accepts, and what a node needs at start (a
// certificate) comes into being on its own. The image itself: test/dockerfile.test.ts.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../src/config/load.ts';
import { createLogger } from '../src/log/logger.ts';
import { loadTlsCredentials } from '../src/tls/certificates.ts';
import { runCli } from './helpers/cli.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Service {
  build?: string | { context: string; dockerfile?: string };
  image?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}
const compose: { services: Record<string, Service>; volumes?: Record<string, unknown> } = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'), { merge: true });
const nodes = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);

/** The WORKDIR and VOLUME of the image's last stage. */
function imageLayout(): { workdir: string; volumes: string[] } {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const last = text.slice(text.lastIndexOf('\nFROM '));
  return {
    workdir: /^WORKDIR\s+(\S+)/m.exec(last)![1]!,
    volumes: JSON.parse(/^VOLUME\s+(\[.*\])/m.exec(last)![1]!),
  };
}

describe('compose.yaml', () => {
  it('runs three nodes built from this checkout, after a database that reports healthy', () => {
    expect(nodes.map(([name]) => name)).toHaveLength(3);
    for (const [, node] of nodes) {
      const context = typeof node.build === 'string' ? node.build : node.build!.context;
      const dockerfile = typeof node.build === 'string' ? 'Dockerfile' : (node.build!.dockerfile ?? 'Dockerfile');
      expect(existsSync(join(ROOT, context, dockerfile))).toBe(true);
      for (const [dependency, { condition }] of Object.entries(node.depends_on ?? {})) {
        expect(compose.services[dependency]).toBeDefined();
        if (condition === 'service_healthy') expect(compose.services[dependency]!.healthcheck).toBeDefined();
      }
    }
  });

  it('mounts nothing that has to be created by hand', () => {
    const tracked = new Set(execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n'));
    const declared = Object.keys(compose.volumes ?? {});
    for (const [name, service] of Object.entries(compose.services)) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0]!;
        if (/^[./~]/.test(source)) {
          // A host folder: it must come with the checkout (a tracked file under it).
          const rel = source.replace(/^\.\//, '').replace(/\/$/, '');
          expect(
            [...tracked].some((f) => f === rel || f.startsWith(`${rel}/`)),
            `${name} mounts ${source}, which a clean checkout does not have`,
          ).toBe(true);
        } else {
          expect(declared, `${name} mounts the volume ${source}, not declared under volumes:`).toContain(source);
        }
      }
    }
    // Each node keeps its generated certificate on a volume at the image's data folder.
    const { workdir, volumes } = imageLayout();
    const dataDir = join(workdir, loadConfig({ env: {}, local: false }).dataDir.slice(ROOT.length));
    expect(volumes).toContain(dataDir);
    for (const [, node] of nodes) expect(node.volumes?.some((v) => v.split(':')[1] === dataDir)).toBe(true);
  });

  it('gives each node a configuration that loads, reaches the db service with its credentials, and generates the certificate', async () => {
    const db = compose.services['db']!.environment!;
    const hostPorts = new Set<string>();
    for (const [name, node] of nodes) {
      // Unknown MAILSVC_* names and bad values are configuration errors, as at the node's start.
      const config = loadConfig({ env: node.environment, local: false });
      expect(config.database.client).toBe('pg');
      const url = new URL(config.database.connection as string);
      expect([url.hostname, url.username, url.password, url.pathname]).toStrictEqual(['db', db.POSTGRES_USER, db.POSTGRES_PASSWORD, `/${db.POSTGRES_DB}`]);

      const published = (node.ports ?? []).map((p) => p.split(':'));
      expect(published.map(([, inside]) => Number(inside)).sort()).toStrictEqual(
        [config.http.port, config.inbound.port, config.submission.port, config.submission.tlsPort].sort(),
      );
      for (const [outside] of published) {
        expect(hostPorts.has(outside!), `${name} publishes host port ${outside} a second time`).toBe(false);
        hostPorts.add(outside!);
      }

      // No certificate configured: the node generates one in its data folder at first start.
      expect(config.tls).toStrictEqual({ cert: null, key: null, trustedCAs: null });
      const dir = mkdtempSync(join(tmpdir(), 'mailsvc-compose-'));
      onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
      const tls = await loadTlsCredentials(config.tls, dir, config.server.hostname, createLogger('silent'));
      expect(tls.source).toBe('generated');
      expect(tls.cert).toMatch(/^-----BEGIN CERTIFICATE-----/);
    }
  });

  it('stops a node whose certificate file is missing with an error naming tls.cert and its variable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailsvc-compose-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        dataDir: join(dir, 'data'),
        server: { hostname: 'mx1.compose.test' },
        http: { host: '127.0.0.1', port: 0 },
        submission: { host: '127.0.0.1', port: 0, tlsPort: 0 },
        inbound: { host: '127.0.0.1', port: 0 },
      }),
    );
    const missing = join(dir, 'tls', 'cert.pem');
    const res = await runCli(['--config', config, 'serve', '--roles', 'submission'], { MAILSVC_TLS_CERT: missing, MAILSVC_TLS_KEY: join(dir, 'tls', 'key.pem') });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`tls.cert (MAILSVC_TLS_CERT): cannot read ${missing}: no such file`);
    expect(res.stderr).not.toMatch(/ENOENT/);
  });
});
