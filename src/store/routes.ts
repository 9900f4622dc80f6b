import type { Conn, Tx } from './db.ts';
import type { WebhookEndpointRow } from './webhooks.ts';

/** A route (SPEC §14): a webhook endpoint with a match, so it shares the endpoint's secret, states and log. */
export type RouteRow = WebhookEndpointRow & { route_match: string; route_priority: number };

/** A domain that receives, and whose workspace it receives for. */
export interface ReceivingDomain {
  name: string;
  workspace_id: number;
}

const routes = (db: Conn) => db('webhook_endpoints').whereNotNull('route_match');

export const routesRepo = {
  list: (db: Conn, workspaceId: number): Promise<RouteRow[]> => routes(db).where({ workspace_id: workspaceId }).orderBy('id'),
  byId: (db: Conn, id: number): Promise<RouteRow | undefined> => routes(db).where({ id }).first(),
  /** Every route of every workspace, for the inbound MX's snapshot. */
  all: (db: Conn): Promise<RouteRow[]> => routes(db).orderBy('id'),
  /** Verified domains with receiving on. */
  receivingDomains: (db: Conn): Promise<ReceivingDomain[]> => db('domains').where({ inbound: true, status: 'verified' }).orderBy('id').select('name', 'workspace_id'),
  /**
   * Replay: every delivery of the route created at or after `since` is pending again, due now,
   * with a fresh retry series. Returns how many.
   */
  replay: (tx: Tx, routeId: number, since: number, now: number): Promise<number> =>
    tx('webhook_deliveries')
      .where({ endpoint_id: routeId })
      .where('created_at', '>=', since)
      .update({ status: 'pending', attempts: 0, due_at: now, lease_owner: null, lease_until: null, updated_at: now }),
};
