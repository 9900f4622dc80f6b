import { hostnameWarning } from './config/load.ts';
import type { Config } from './config/schema.ts';
import { gatherFromNowOn } from './log/logger.ts';
import { startSubjectIndexing } from './messages/subject-indexing.ts';
import { startRetention } from './retention/prune.ts';
import { Readiness, ROLE_STARTERS, ROLES, type Role, type RunningRole } from './roles/index.ts';
import { createServices, type ServiceOverrides, type Services } from './services.ts';
import { workspaces } from './store/workspaces.ts';

export function parseRoles(list: string | undefined): Role[] {
  if (!list) return [...ROLES];
  const names = list
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  const unknown = names.filter((r) => !(ROLES as readonly string[]).includes(r));
  if (unknown.length > 0) throw new Error(`Unknown role ${unknown.join(', ')}; roles are ${ROLES.join(', ')}`);
  return names as Role[];
}

export interface RunningServer {
  services: Services;
  roles: Partial<Record<Role, RunningRole>>;
  /** `http://127.0.0.1:PORT` when the api role runs. */
  url: string | null;
  close(): Promise<void>;
}

/** The composition root: builds the services over one database and starts the chosen roles. */
export async function startServer(config: Config, options: { roles?: Role[]; overrides?: ServiceOverrides; logRequests?: boolean } = {}): Promise<RunningServer> {
  const wanted = options.roles ?? [...ROLES];
  const services = await createServices(config, options.overrides);
  const { log } = services;

  // Nothing is sent in the sandbox, so no receiver ever checks the name.
  const warning = config.delivery.mode === 'sandbox' ? null : hostnameWarning(config);
  if (warning) log.warn(warning);
  for (const domain of await services.domains.overridden()) {
    log.warn({ domain }, 'domain was marked verified WITHOUT DNS proof (operator override); receivers will fail its DKIM');
  }

  const retention = startRetention(services);
  const subjects = startSubjectIndexing(services);
  const running: Partial<Record<Role, RunningRole>> = {};
  const started: Role[] = [];
  // The API listens first, so /healthz answers 503 naming the roles still starting rather than
  // refusing connections; each role reports once its starter returns (its listeners accept).
  const readiness = new Readiness(wanted);
  const stopRoles = async () => {
    for (const role of [...started].reverse()) {
      readiness.stopping(role);
      await running[role]!.close();
    }
  };
  try {
    for (const role of wanted) {
      running[role] = await ROLE_STARTERS[role](services, { logRequests: options.logRequests, readiness });
      started.push(role);
      readiness.started(role);
    }
  } catch (err) {
    retention.stop();
    await subjects.stop();
    await stopRoles();
    await services.close();
    throw err;
  }
  log.info({ phase: 'ready', roles: wanted }, `ready: ${wanted.join(', ')}`);

  if ((await workspaces.list(services.db)).length === 0) {
    log.info('No workspace yet. Create one with: mailsvc workspace create NAME');
  }
  // Start-up's lines are out; from here lines that come fast are written together.
  gatherFromNowOn(log);

  let closing: Promise<void> | null = null;
  return {
    services,
    roles: running,
    url: running.api ? `http://127.0.0.1:${running.api.ports.http}` : null,
    // Inbound paths first (stop accepting), then workers (finish or release), then storage.
    close: () =>
      (closing ??= (async () => {
        retention.stop();
        await subjects.stop();
        await stopRoles();
        await services.close();
      })()),
  };
}
