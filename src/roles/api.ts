import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from '../api/app.ts';
import type { RoleStarter } from './types.ts';

export const startApiRole: RoleStarter = async (services, options) => {
  const { config, log } = services;
  const http = await buildApp(services, { logger: options.logRequests ? (log as unknown as FastifyBaseLogger) : undefined, readiness: options.readiness });
  await http.listen({ host: config.http.host, port: config.http.port });
  const address = http.server.address();
  const port = typeof address === 'object' && address ? address.port : config.http.port;
  log.info({ phase: 'start', role: 'api', port }, `HTTP API listening on ${config.http.host}:${port}`);
  return { ports: { http: port }, close: () => http.close() };
};
