import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Logger } from '../../src/core/ports.ts';
import { GENERATED_CERT, GENERATED_KEY, loadTlsCredentials } from '../../src/tls/certificates.ts';
import { startTestServer } from '../helpers/server.ts';
import { RETURN_PATH, testCertificate } from './harness.ts';
import { RawSmtp } from './smtp-client.ts';

function recordingLogger(lines: { level: string; obj: unknown; msg?: string }[]): Logger {
  const log = (level: string) => (obj: object | string, msg?: string) => void lines.push({ level, obj, msg });
  const logger: Logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'), child: () => logger };
  return logger;
}

function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailsvc-tls-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('TLS credentials', () => {
  it('generates a self-signed pair on first start, says so, and reuses it on the next start', async () => {
    const dir = scratchDir();
    const lines: { level: string; obj: unknown; msg?: string }[] = [];
    const first = await loadTlsCredentials({ cert: null, key: null }, dir, 'mail.mailsvc.test', recordingLogger(lines));
    expect(first.source).toBe('generated');
    expect(new X509Certificate(first.cert).subject).toContain('CN=mail.mailsvc.test');
    expect(readFileSync(join(dir, GENERATED_CERT), 'utf8')).toBe(first.cert);
    expect(statSync(join(dir, GENERATED_KEY)).mode & 0o077).toBe(0);
    expect(lines.some((l) => l.level === 'warn' && /generated a self-signed TLS certificate for mail\.mailsvc\.test/.test(l.msg ?? ''))).toBe(true);

    const other = scratchDir();
    writeFileSync(join(other, GENERATED_CERT), first.cert);
    writeFileSync(join(other, GENERATED_KEY), first.key);
    const again = await loadTlsCredentials({ cert: null, key: null }, other, 'mail.mailsvc.test', recordingLogger([]));
    expect(again).toEqual({ cert: first.cert, key: first.key, source: 'generated-earlier' });
  });

  it('reads tls.cert and tls.key from files, and refuses one without the other', async () => {
    const dir = scratchDir();
    const { cert, key } = await testCertificate();
    writeFileSync(join(dir, 'c.pem'), cert);
    writeFileSync(join(dir, 'k.pem'), key);
    const loaded = await loadTlsCredentials({ cert: join(dir, 'c.pem'), key: join(dir, 'k.pem') }, dir, 'x.test', recordingLogger([]));
    expect(loaded).toEqual({ cert, key, source: 'config' });
    expect(existsSync(join(dir, GENERATED_CERT))).toBe(false);
    await expect(loadTlsCredentials({ cert: join(dir, 'c.pem'), key: null }, dir, 'x.test', recordingLogger([]))).rejects.toThrow(/together/);
  });

  it('the inbound role without tls config serves STARTTLS with the pair it generated into dataDir', async () => {
    const server = await startTestServer('sqlite', {
      roles: ['inbound'],
      config: { inbound: { host: '127.0.0.1', port: 0, returnPathDomain: RETURN_PATH } },
    });
    const certFile = join(server.store.dataDir, GENERATED_CERT);
    expect(existsSync(certFile)).toBe(true);
    const c = await RawSmtp.connect(server.roles.inbound!.ports.smtp!);
    await c.command('EHLO mx.example.org');
    const { socket } = await c.starttls();
    expect(socket.getPeerX509Certificate()!.raw.equals(new X509Certificate(readFileSync(certFile)).raw)).toBe(true);
    await c.quit();
  });
});
