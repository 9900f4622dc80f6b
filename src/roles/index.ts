import { startApiRole } from './api.ts';
import { startDeliveryRole } from './delivery.ts';
import { startInboundRole } from './inbound.ts';
import { startSubmissionRole } from './submission.ts';
import { startWebhooksRole } from './webhooks.ts';
import type { Role, RoleStarter } from './types.ts';

/** The roles this build can run; `--roles` names outside this table are reported as not built. */
export const ROLE_STARTERS: Partial<Record<Role, RoleStarter>> = {
  api: startApiRole,
  delivery: startDeliveryRole,
  inbound: startInboundRole,
  webhooks: startWebhooksRole,
  submission: startSubmissionRole,
};

export { ROLES, type Role, type RunningRole } from './types.ts';
