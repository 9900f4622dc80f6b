import nodemailer from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createServices } from '../../src/services.ts';
import { spawnServe } from '../helpers/process.ts';
import { STORES } from '../helpers/stores.ts';
import { crashConfigFile, crashDestination, crashSender } from '../helpers/crash.ts';
import { queuedId } from './env.ts';

const CLIENTS = 4;

describe.each(STORES)('submission crash safety (%s)', (kind) => {
  it('SIGKILL right after a 250: every message answered 250 is there after the restart and is delivered', { timeout: 120_000 }, async () => {
    const { dns, sink } = await crashDestination();
    const configFile = await crashConfigFile(kind, {
      submission: { host: '127.0.0.1', port: 0, tlsPort: 0 },
      inbound: { host: '127.0.0.1', port: 0 },
      dns: { servers: [dns.address], timeout: 1 },
      delivery: { port: sink.port, leaseSeconds: 2 },
    });
    const apiKey = await crashSender(configFile);

    // Submission first, so its port is in the log by the time the API's line is.
    const first = await spawnServe(configFile, ['--roles', 'submission,api']);
    const port = Number(/SMTP submission listening on [\d.]+:(\d+)/.exec(first.log())![1]);

    // Several clients submit without pause; the process is killed the moment the 30th 250 arrives.
    const acknowledged: number[] = [];
    let killed: Promise<void> | null = null;
    const client = async (c: number) => {
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port,
        secure: false,
        requireTLS: true,
        tls: { rejectUnauthorized: false },
        auth: { user: 'app', pass: apiKey },
        pool: true,
        maxConnections: 1,
        maxMessages: Infinity,
      } as SMTPPool.Options);
      try {
        for (let n = 0; killed === null; n++) {
          const raw = Buffer.from(`From: news@acme.test\r\nTo: u${c}@dest.test\r\nSubject: ${c}-${n}\r\n\r\nhello\r\n`);
          const info = await transport.sendMail({ envelope: { from: 'news@acme.test', to: [`u${c}@dest.test`] }, raw });
          acknowledged.push(queuedId(info.response));
          if (acknowledged.length === 30) killed = first.kill();
        }
      } catch {
        // The connection died with the process: that message was never acknowledged.
      } finally {
        transport.close();
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
    // Assigned in a callback, which tsc's narrowing does not see.
    await (killed as Promise<void> | null);
    expect(acknowledged.length).toBeGreaterThanOrEqual(30);

    const second = await spawnServe(configFile, ['--roles', 'api,delivery']);
    const check = await createServices(loadConfig({ file: configFile, env: {} }), { log: createLogger('silent') });
    onTestFinished(() => check.close());
    const rows = await check.db('messages').whereIn('id', acknowledged).select('id', 'message_id_header');
    expect(rows.map((r: { id: number }) => r.id).sort((a: number, b: number) => a - b)).toStrictEqual([...acknowledged].sort((a, b) => a - b));
    // A delivered copy names its message through the Message-ID stored with it.
    const byMessageId = new Map<string, number>(rows.map((r: { id: number; message_id_header: string }) => [r.message_id_header, r.id]));
    const deliveredIds = () => new Set(sink.messages.map((m) => byMessageId.get(/^Message-ID: (\S+)$/im.exec(m.raw.toString('latin1'))?.[1] ?? '')));
    const delivered = (id: number) => deliveredIds().has(id);
    await sink.waitFor(() => acknowledged.every(delivered), 'every acknowledged message delivered after the restart');
    expect(await second.stop()).toBe(0);
  });
});
