import type { Services } from '../services.ts';

export const ROLES = ['api', 'submission', 'inbound', 'delivery', 'webhooks'] as const;
export type Role = (typeof ROLES)[number];

/** A started role: what it listens on (for logs and tests) and how to stop it cleanly. */
export interface RunningRole {
  /** Listening ports by name, e.g. `{ http: 3000 }` or `{ smtp: 2525 }`. */
  ports: Record<string, number>;
  /** Stop accepting, finish or release claimed work, close. */
  close(): Promise<void>;
}

export interface RoleOptions {
  logRequests?: boolean;
  /** Which roles of the process are running, for `/healthz`; without it the API answers 200 when the database does. */
  readiness?: { notReady(): readonly Role[] };
}

export type RoleStarter = (services: Services, options: RoleOptions) => Promise<RunningRole>;
