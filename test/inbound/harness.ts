import { generate } from 'selfsigned';
import { verpSender } from '../../src/delivery/verp.ts';
import { recordReported } from '../../src/messages/outcomes.ts';
import { messagesRepo, type MessageRow, type RecipientRow } from '../../src/store/messages.ts';
import type { Clock } from '../../src/core/ports.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import type { StoreKind } from '../helpers/stores.ts';

export const RETURN_PATH = 'bounces.mailsvc.test';

let pair: Promise<{ cert: string; key: string }> | null = null;
/** One certificate for every listener of a test file: key generation is the slow part of start. */
export function testCertificate() {
  pair ??= generate([{ name: 'commonName', value: 'mail.mailsvc.test' }], { keySize: 2048, algorithm: 'sha256' }).then((p) => ({
    cert: p.cert,
    key: p.private,
  }));
  return pair;
}

export interface InboundHarness {
  server: TestServer;
  port: number;
  apiKey: string;
  workspaceId: number;
  /** POST /emails, then the recipients marked delivered the way delivery records it. */
  delivered(body?: Record<string, unknown>): Promise<{ id: number; message: MessageRow; recipients: RecipientRow[] }>;
  verp(recipientId: number): string;
  email(id: number): Promise<any>;
  suppression(stream: string, address: string): Promise<{ status: number; body: any }>;
  reports(): Promise<any[]>;
}

export async function startInbound(kind: StoreKind, opts: { clock?: Clock; config?: Record<string, unknown> } = {}): Promise<InboundHarness> {
  const tls = await testCertificate();
  const server = await startTestServer(kind, {
    clock: opts.clock,
    roles: ['api', 'inbound'],
    config: {
      tls,
      ...(opts.config ?? {}),
      // One parser worker: a 2-core test machine starts many listeners.
      inbound: { host: '127.0.0.1', port: 0, returnPathDomain: RETURN_PATH, parseWorkers: 1, ...((opts.config?.inbound as object) ?? {}) },
    },
  });
  const ws = await server.workspace();
  await server.verifiedDomain(ws.id, 'acme.test');
  const { db, clock } = server.services;

  return {
    server,
    port: server.roles.inbound!.ports.smtp!,
    apiKey: ws.apiKey,
    workspaceId: ws.id,
    async delivered(body = {}) {
      const res = await server.api('POST', '/emails', {
        key: ws.apiKey,
        body: { from: 'News <news@acme.test>', to: 'user@example.org', subject: 'Hello', text: 'Hi there', ...body },
      });
      if (res.status !== 201) throw new Error(`POST /emails: ${res.status} ${res.text}`);
      const message = (await messagesRepo.byId(db, res.body.id))!;
      const recipients = await messagesRepo.recipients(db, message.id);
      await db.transaction(async (tx) => {
        for (const recipient of recipients) {
          await recordReported(
            tx,
            { message, recipient, at: clock.now() },
            { status: 'delivered', name: 'email.delivered' },
            { response: '250 2.0.0 Ok: queued as 4F2A', reporting_mta: 'mail.example.org' },
          );
        }
      });
      return { id: message.id, message, recipients: await messagesRepo.recipients(db, message.id) };
    },
    verp: (recipientId) => verpSender(server.services.tokens.verp, recipientId, RETURN_PATH),
    async email(id) {
      const res = await server.api('GET', `/emails/${id}`, { key: ws.apiKey });
      if (res.status !== 200) throw new Error(`GET /emails/${id}: ${res.status}`);
      return res.body;
    },
    async suppression(stream, address) {
      const res = await server.api('GET', `/suppressions/${stream}/${encodeURIComponent(address)}`, { key: ws.apiKey });
      return { status: res.status, body: res.body };
    },
    reports: () => db('inbound_reports').orderBy('id'),
  };
}
