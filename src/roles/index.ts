import { startApiRole } from './api.ts';
import { startDeliveryRole } from './delivery.ts';
import type { Role, RoleStarter } from './types.ts';

/** The roles this build can run; `--roles` names outside this table are reported as not built. */
export const ROLE_STARTERS: Partial<Record<Role, RoleStarter>> = {
  api: startApiRole,
  delivery: startDeliveryRole,
};

export { ROLES, type Role, type RunningRole } from './types.ts';
