import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from './api/app.ts';
import { hostnameWarning } from './config/load.ts';
import type { Config } from './config/schema.ts';
import { createServices, type ServiceOverrides, type Services } from './services.ts';
import { workspaces } from './store/workspaces.ts';
import { startRetention } from './retention/prune.ts';

export const ROLES = ['api', 'submission', 'inbound', 'delivery', 'webhooks'] as const;
export type Role = (typeof ROLES)[number];

/** Roles this build can run; the others are accepted by --roles and reported as not built. */
const BUILT: ReadonlySet<Role> = new Set<Role>(['api']);

export function parseRoles(list: string | undefined): Role[] {
  if (!list) return [...ROLES];
  const names = list.split(',').map((r) => r.trim()).filter(Boolean);
  const unknown = names.filter((r) => !(ROLES as readonly string[]).includes(r));
  if (unknown.length > 0) throw new Error(`Unknown role ${unknown.join(', ')}; roles are ${ROLES.join(', ')}`);
  return names as Role[];
}

export interface RunningServer {
  services: Services;
  http: FastifyInstance | null;
  /** `http://127.0.0.1:PORT` when the api role runs. */
  url: string | null;
  close(): Promise<void>;
}

/** The composition root: builds the services over one database and starts the chosen roles. */
export async function startServer(
  config: Config,
  options: { roles?: Role[]; overrides?: ServiceOverrides; logRequests?: boolean } = {},
): Promise<RunningServer> {
  const roles = options.roles ?? [...ROLES];
  const services = await createServices(config, options.overrides);
  const { log } = services;

  const warning = hostnameWarning(config);
  if (warning) log.warn(warning);
  for (const domain of await services.domains.overridden()) {
    log.warn({ domain }, 'domain was marked verified WITHOUT DNS proof (operator override); receivers will fail its DKIM');
  }
  for (const role of roles.filter((r) => !BUILT.has(r))) log.warn({ role }, 'role is not part of this build yet');

  const retention = startRetention(services);
  let http: FastifyInstance | null = null;
  let url: string | null = null;
  if (roles.includes('api')) {
    http = await buildApp(services, { logger: options.logRequests ? (log as unknown as FastifyBaseLogger) : undefined });
    await http.listen({ host: config.http.host, port: config.http.port });
    const address = http.server.address();
    const port = typeof address === 'object' && address ? address.port : config.http.port;
    url = `http://127.0.0.1:${port}`;
    log.info({ phase: 'start', role: 'api', port }, `HTTP API listening on ${config.http.host}:${port}`);
  }

  if ((await workspaces.list(services.db)).length === 0) {
    log.info('No workspace yet. Create one with: mailsvc workspace create NAME');
  }

  let closing: Promise<void> | null = null;
  return {
    services,
    http,
    url,
    close: () =>
      (closing ??= (async () => {
        retention.stop();
        await http?.close();
        await services.close();
      })()),
  };
}
