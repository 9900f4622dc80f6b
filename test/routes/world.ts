import { generateKeyPairSync } from 'node:crypto';
import { onTestFinished } from 'vitest';
import { dkimSign, sealMessage } from 'mailauth';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { createDnsResolver } from '../../src/dns/resolver.ts';
import type { Clock } from '../../src/core/ports.ts';
import { startTestDns, type TestDns } from '../helpers/dns-server.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import type { StoreKind } from '../helpers/stores.ts';
import { RETURN_PATH, testCertificate } from '../inbound/harness.ts';

export interface RouteWorld {
  server: TestServer;
  dns: TestDns;
  port: number;
  apiKey: string;
  workspaceId: number;
  /** POST /routes on acme.test. */
  route(match: string, url: string, priority?: number): Promise<{ id: number; secret: string }>;
  /** Sends with nodemailer over SMTP to the inbound MX; resolves with the final reply. */
  send(raw: Buffer | string, envelope: { from: string; to: string[] }): Promise<string>;
}

/** A server with the API, the inbound MX and the webhook dispatcher, its DNS a loopback server; acme.test receives. */
export async function routeWorld(
  kind: StoreKind,
  opts: { clock?: Clock; webhooks?: Record<string, unknown>; inbound?: Record<string, unknown> } = {},
): Promise<RouteWorld> {
  const dns = await startTestDns();
  onTestFinished(() => dns.close());
  const tls = await testCertificate();
  const server = await startTestServer(kind, {
    clock: opts.clock,
    roles: ['api', 'inbound', 'webhooks'],
    dns: createDnsResolver([dns.address], 2000),
    config: {
      tls,
      dns: { servers: [dns.address], timeout: 2 },
      webhooks: { allowPrivateAddresses: true, timeout: 2, ...opts.webhooks },
      inbound: { host: '127.0.0.1', port: 0, returnPathDomain: RETURN_PATH, parseWorkers: 1, ...opts.inbound },
    },
  });
  const ws = await server.workspace();
  await server.verifiedDomain(ws.id, 'acme.test');
  await server.services.domains.update(null, 'acme.test', { inbound: true });
  const port = server.roles.inbound!.ports.smtp!;
  return {
    server,
    dns,
    port,
    apiKey: ws.apiKey,
    workspaceId: ws.id,
    async route(match, url, priority) {
      const res = await server.api('POST', '/routes', { key: ws.apiKey, body: { match, url, ...(priority === undefined ? {} : { priority }) } });
      if (res.status !== 201) throw new Error(`POST /routes: ${res.status} ${res.text}`);
      return res.body;
    },
    async send(raw, envelope) {
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, tls: { rejectUnauthorized: false } });
      try {
        const info = await transport.sendMail({ envelope, raw });
        return info.response;
      } finally {
        transport.close();
      }
    },
  };
}

/** The bytes nodemailer builds for a message. */
export function compose(mail: Mail.Options): Promise<Buffer> {
  return new MailComposer(mail).compile().build();
}

/** An RSA key pair and its DKIM TXT record. */
export function dkimKey(): { privateKey: string; record: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  return { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), record: `v=DKIM1; k=rsa; p=${p}` };
}

/** `raw` with a DKIM-Signature by mailauth's signer prepended. */
export async function dkimSigned(raw: Buffer, signer: { domain: string; selector: string; privateKey: string }): Promise<Buffer> {
  // mailauth reads `signatureData`; its type declaration names the fields one level up.
  const options = { canonicalization: 'relaxed/relaxed', signatureData: [{ signingDomain: signer.domain, selector: signer.selector, privateKey: signer.privateKey }] };
  const { signatures, errors } = await dkimSign(raw, options as unknown as Parameters<typeof dkimSign>[1]);
  if (errors.length > 0) throw new Error(`DKIM signing failed: ${JSON.stringify(errors)}`);
  return Buffer.concat([Buffer.from(signatures), raw]);
}

/** `raw` with the first ARC set (RFC 8617) by a forwarder that saw `authResults`, by mailauth's sealer. */
export async function arcSealed(raw: Buffer, sealer: { domain: string; selector: string; privateKey: string; authResults: string }): Promise<Buffer> {
  // mailauth reads the instance, chain validation and results beside the key; its type declaration omits them.
  const seal = { signingDomain: sealer.domain, selector: sealer.selector, privateKey: sealer.privateKey, i: 1, cv: 'none', authResults: sealer.authResults };
  return Buffer.concat([await sealMessage(raw, seal as Parameters<typeof sealMessage>[1]), raw]);
}
