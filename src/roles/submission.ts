import { ServiceError } from '../core/errors.ts';
import type { Logger } from '../core/ports.ts';
import type { Services } from '../services.ts';
import type { SubmissionDeps } from '../submission/desk.ts';
import { warmHeaderReader } from '../submission/header-values.ts';
import { startSubmissionListeners } from '../submission/server.ts';
import { loadTlsCredentials } from '../tls/certificates.ts';
import type { RoleStarter } from './types.ts';

/** What SMTP submission needs of the services; `log` in place of theirs (a test's, say). */
export const submissionDeps = (services: Services, log: Logger = services.log): SubmissionDeps => ({
  accept: services.accept,
  authenticate: (token) => services.tenancy.authenticate(token),
  principalOfKey: (keyId) => services.tenancy.principalOfLiveKey(keyId),
  rateLimit: services.rateLimit,
  clock: services.clock,
  log,
  hostname: services.config.server.hostname,
});

/** SMTP submission for programs that only speak SMTP: STARTTLS on `submission.port`, implicit TLS on `.tlsPort`. */
export const startSubmissionRole: RoleStarter = async (services) => {
  const { config, log } = services;
  warmHeaderReader();
  const tls = await loadTlsCredentials(config.tls, config.dataDir, config.server.hostname, log);
  const listeners = await startSubmissionListeners(submissionDeps(services), {
    ...config.submission,
    maxClients: config.submission.maxConnections,
    maxConnectionsPerIp: config.submission.maxConnectionsPerAddress,
    tls,
  });
  for (const [i, { network, keyId }] of config.submission.trustedNetworks.entries()) {
    await services.tenancy.principalOfLiveKey(keyId).catch((err: unknown) => {
      const why = err instanceof ServiceError ? 'which is revoked or unknown' : `which could not be looked up (${(err as Error).message})`;
      log.error(
        { phase: 'start', role: 'submission', network, key_id: keyId },
        `submission.trustedNetworks[${i}] names API key ${keyId}, ${why}: clients in ${network} must authenticate`,
      );
    });
  }
  const { submission, submissions } = listeners.ports;
  log.info(
    { phase: 'start', role: 'submission', port: submission, tls_port: submissions, tls: tls.source },
    `SMTP submission listening on ${config.submission.host}:${submission} (STARTTLS) and :${submissions} (TLS)`,
  );
  return { ports: listeners.ports, close: () => listeners.close() };
};
