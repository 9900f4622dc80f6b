import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { WebhookAttemptRow, WebhookEndpointRow } from '../../../store/webhooks.ts';
import type { EndpointService } from '../../../webhooks/endpoint-service.ts';
import { decodeCursor, toPage } from '../../pagination.ts';
import { Deleted, IdParams, ListQuery, authErrors, bearerSecurity, errors, page } from '../../schemas/common.ts';

type App = Parameters<FastifyPluginAsyncTypebox>[0];

/** One kind of endpoint as its routes show it: where it lives and how its rows and log entries read. */
export interface EndpointKind<Row extends WebhookEndpointRow> {
  /** `/webhooks`, `/routes` */
  path: string;
  tags: string[];
  service: EndpointService<Row>;
  /** The schema id of the kind's own representation, whose shape `view` gives. */
  ref: string;
  view(row: Row): unknown;
  /** The schema id of a delivery log entry, whose shape `attemptView` gives. */
  attemptRef: string;
  attemptView(row: WebhookAttemptRow): unknown;
}

/**
 * The routes webhook endpoints and inbound routes share: the list, `GET /:id`, `DELETE /:id`,
 * `POST /:id/rotate-secret`, `GET /:id/deliveries` and `POST /:id/replay`.
 */
export function endpointActions<Row extends WebhookEndpointRow>(app: App, kind: EndpointKind<Row>): void {
  const { path, tags, service } = kind;
  const ref = Type.Ref(kind.ref);
  const one = { 200: ref, ...authErrors, ...errors };

  app.get(
    path,
    { schema: { tags, security: bearerSecurity, response: { 200: Type.Object({ data: Type.Array(ref), next_cursor: Type.Null() }), ...authErrors, 403: errors[403] } } },
    async (request) => ({ data: (await service.list(request.principal.workspaceId)).map((row) => kind.view(row)), next_cursor: null }),
  );

  app.get(`${path}/:id`, { schema: { tags, security: bearerSecurity, params: IdParams, response: one } }, async (request) =>
    kind.view(await service.get(request.principal.workspaceId, request.params.id)),
  );

  app.delete(`${path}/:id`, { schema: { tags, security: bearerSecurity, params: IdParams, response: { 200: Deleted, ...authErrors, ...errors } } }, async (request) => {
    await service.remove(request.principal.workspaceId, request.params.id);
    return { id: request.params.id, deleted: true };
  });

  app.post(`${path}/:id/rotate-secret`, { schema: { tags, security: bearerSecurity, params: IdParams, response: one } }, async (request) =>
    kind.view(await service.rotateSecret(request.principal.workspaceId, request.params.id)),
  );

  app.get(
    `${path}/:id/deliveries`,
    {
      schema: {
        tags,
        security: bearerSecurity,
        params: IdParams,
        querystring: ListQuery,
        response: { 200: page(Type.Ref(kind.attemptRef)), ...authErrors, ...errors },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? 20;
      const rows = await service.attempts(request.principal.workspaceId, request.params.id, {
        beforeId: decodeCursor(request.query.cursor) ?? undefined,
        limit: limit + 1,
      });
      return toPage(rows, limit, (row) => kind.attemptView(row));
    },
  );

  app.post(
    `${path}/:id/replay`,
    {
      schema: {
        tags,
        security: bearerSecurity,
        params: IdParams,
        body: Type.Object({ since: Type.String({ maxLength: 40 }) }, { additionalProperties: false }),
        response: { 200: Type.Object({ id: Type.Integer(), queued: Type.Integer() }), ...authErrors, ...errors },
      },
    },
    async (request) => ({ id: request.params.id, queued: await service.replay(request.principal.workspaceId, request.params.id, request.body.since) }),
  );
}
