import { ReturnPathDomains } from '../domains/return-path.ts';
import { mailauthResolver } from '../inbound/auth.ts';
import { startInboundListener } from '../inbound/server.ts';
import { ReceivingRoutes } from '../routes/receiving.ts';
import { loadTlsCredentials } from '../tls/certificates.ts';
import type { RoleStarter } from './types.ts';

/** The inbound MX: DSNs, ARF reports and mailto unsubscribes for the return-path domains, and mail for routes. */
export const startInboundRole: RoleStarter = async (services) => {
  const { config, log } = services;
  const tls = await loadTlsCredentials(config.tls, config.dataDir, config.server.hostname, log);
  const listener = await startInboundListener(
    {
      db: services.db,
      clock: services.clock,
      log,
      metrics: services.metrics,
      verp: services.tokens.verp,
      unsubscribe: services.tokens.unsubscribe,
      hostname: config.server.hostname,
      returnPathDomains: new ReturnPathDomains(services.db, services.clock, config.inbound.returnPathDomain),
      receiving: new ReceivingRoutes(services.db, services.clock),
      routeMail: {
        committer: services.committer,
        resolver: mailauthResolver(services.dns),
        inlineAttachmentBytes: config.inbound.inlineAttachmentBytes,
        baseUrl: config.tracking.baseUrl,
      },
    },
    {
      host: config.inbound.host,
      port: config.inbound.port,
      maxSize: config.inbound.maxSize,
      tls,
      dailyStoreBytesPerIp: config.inbound.dailyStoreBytesPerIp,
      maxClients: config.inbound.maxConnections,
      maxConnectionsPerIp: config.inbound.maxConnectionsPerAddress,
      proxyFrom: config.inbound.proxyProtocol.from,
      handshakeTimeoutMs: config.inbound.handshakeTimeoutMs,
      parse: { workers: config.inbound.parseWorkers, budgetMs: config.inbound.parseBudgetMs, maxQueued: config.inbound.parseQueue },
    },
  );
  log.info(
    { phase: 'start', role: 'inbound', port: listener.port, tls: tls.source, return_path_domain: config.inbound.returnPathDomain },
    `inbound MX listening on ${config.inbound.host}:${listener.port} for ${config.inbound.returnPathDomain}`,
  );
  return { ports: { smtp: listener.port }, close: () => listener.close() };
};
