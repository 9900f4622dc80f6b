import { ReturnPathDomains } from '../domains/return-path.ts';
import { startInboundListener } from '../inbound/server.ts';
import { loadTlsCredentials } from '../tls/certificates.ts';
import type { RoleStarter } from './types.ts';

/** The inbound MX for the return-path domains: DSNs, ARF reports and mailto unsubscribes. */
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
