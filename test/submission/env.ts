import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { onTestFinished } from 'vitest';
import type { Logger } from '../../src/core/ports.ts';
import { submissionDeps } from '../../src/roles/submission.ts';
import { startSubmissionListeners, type SubmissionThread } from '../../src/submission/server.ts';
import type { SubmissionOptions } from '../../src/submission/sessions.ts';
import { loadTlsCredentials } from '../../src/tls/certificates.ts';
import { deliveryEnv, type DeliveryEnv, type EnvOptions } from '../delivery/env.ts';
import type { StoreKind } from '../helpers/stores.ts';

/** nodemailer's options, with the pool ones (one reused session for many messages). */
export type ClientOptions = SMTPTransport.Options & { pool?: boolean; maxConnections?: number; maxMessages?: number };

export interface SubmissionEnv extends DeliveryEnv {
  /** STARTTLS port and implicit-TLS port of the running submission role. */
  ports: { submission: number; submissions: number };
  /** A nodemailer client; by default STARTTLS required, authenticated with the workspace key. */
  client(options?: ClientOptions): Transporter<SMTPTransport.SentMessageInfo>;
}

/** The delivery world of test/delivery/env.ts with the submission role running beside the API. */
export async function submissionEnv(kind: StoreKind, opts: EnvOptions & { submission?: Record<string, unknown> } = {}): Promise<SubmissionEnv> {
  const env = await deliveryEnv(kind, {
    ...opts,
    roles: ['api', 'submission'],
    config: { ...opts.config, submission: { host: '127.0.0.1', port: 0, tlsPort: 0, ...opts.submission } },
  });
  const ports = env.server.roles.submission!.ports as SubmissionEnv['ports'];
  return {
    ...env,
    ports,
    client(options = {}) {
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port: ports.submission,
        secure: false,
        requireTLS: true,
        // The generated certificate is self-signed.
        tls: { rejectUnauthorized: false },
        auth: { user: 'app', pass: env.ws.apiKey },
        connectionTimeout: 20_000,
        greetingTimeout: 20_000,
        ...options,
      } as SMTPTransport.Options);
      onTestFinished(() => transport.close());
      return transport;
    },
  };
}

/** The id in `250 2.0.0 Ok: queued as <id>`. */
export function queuedId(response: string): number {
  const match = /^250 2\.0\.0 Ok: queued as (\d+)$/.exec(response);
  if (!match) throw new Error(`not a queued reply: ${response}`);
  return Number(match[1]);
}

/** What a refused send rejected with: the reply code and text nodemailer saw. */
export async function refusal(promise: Promise<unknown>): Promise<{ code: number; response: string }> {
  try {
    await promise;
  } catch (err) {
    const e = err as { responseCode?: number; response?: string; message: string };
    return { code: e.responseCode ?? 0, response: e.response ?? e.message };
  }
  throw new Error('expected the server to refuse');
}

/** A second pair of listeners on the env's services, with options a test can reach quickly and, if given, a log of its own. */
export async function listenersOn(env: SubmissionEnv, options: Partial<SubmissionOptions> = {}, log?: Logger): Promise<SubmissionThread> {
  const { services, config } = env.server;
  const tls = await loadTlsCredentials(config.tls, config.dataDir, config.server.hostname, services.log);
  const listeners = await startSubmissionListeners(submissionDeps(services, log), { ...config.submission, tls, ...options });
  onTestFinished(() => listeners.close());
  return listeners;
}
