import { startApiRole } from './api.ts';
import { startDeliveryRole } from './delivery.ts';
import { startInboundRole } from './inbound.ts';
import { startSubmissionRole } from './submission.ts';
import { startWebhooksRole } from './webhooks.ts';
import type { Role, RoleStarter } from './types.ts';

/** How each role starts. */
export const ROLE_STARTERS: Record<Role, RoleStarter> = {
  api: startApiRole,
  delivery: startDeliveryRole,
  inbound: startInboundRole,
  webhooks: startWebhooksRole,
  submission: startSubmissionRole,
};

export { ROLES, type Role, type RunningRole } from './types.ts';
export { Readiness } from './readiness.ts';
