import { startSubmissionListeners } from '../submission/server.ts';
import { loadTlsCredentials } from '../tls/certificates.ts';
import type { RoleStarter } from './types.ts';

/** SMTP submission for programs that only speak SMTP: STARTTLS on `submission.port`, implicit TLS on `.tlsPort`. */
export const startSubmissionRole: RoleStarter = async (services) => {
  const { config, log } = services;
  const tls = await loadTlsCredentials(config.tls, config.dataDir, config.server.hostname, log);
  const listeners = await startSubmissionListeners(
    {
      accept: services.accept,
      authenticate: (token) => services.tenancy.authenticate(token),
      rateLimit: services.rateLimit,
      clock: services.clock,
      log,
      hostname: config.server.hostname,
    },
    { ...config.submission, maxClients: config.submission.maxConnections, maxConnectionsPerIp: config.submission.maxConnectionsPerAddress, tls },
  );
  const { submission, submissions } = listeners.ports;
  log.info(
    { phase: 'start', role: 'submission', port: submission, tls_port: submissions, tls: tls.source },
    `SMTP submission listening on ${config.submission.host}:${submission} (STARTTLS) and :${submissions} (TLS)`,
  );
  return { ports: listeners.ports, close: () => listeners.close() };
};
