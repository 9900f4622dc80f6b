import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireWorkspaceKey } from '../../../tenancy/principal.ts';
import { routeAttemptView, routeView, type RouteService } from '../../../routes/service.ts';
import { IdParams, authErrors, bearerSecurity, errors } from '../../schemas/common.ts';
import { endpointActions } from './endpoint-actions.ts';

const Route = Type.Object(
  {
    id: Type.Integer(),
    match: Type.String({ description: 'an address, `*@domain`, or a local part with one `*` such as `*+tag@domain`' }),
    url: Type.String(),
    priority: Type.Integer({ description: 'among equally specific matches, the lowest wins' }),
    status: Type.String({ description: 'active, paused or disabled, as a webhook endpoint' }),
    failure_count: Type.Integer({ description: 'consecutive failed attempts, reset by any success' }),
    last_success_at: Type.Union([Type.String(), Type.Null()]),
    secret: Type.String({ description: 'signing secret, whsec_...' }),
    created_at: Type.String(),
  },
  { $id: 'Route' },
);
const RouteAttempt = Type.Object(
  {
    id: Type.Integer(),
    inbound_id: Type.Integer({ description: 'the received message (GET /inbound/{id})' }),
    attempt: Type.Integer(),
    response_code: Type.Union([Type.Integer(), Type.Null()]),
    response_body: Type.Union([Type.String(), Type.Null()], { description: 'the first 4 KB' }),
    error: Type.Union([Type.String(), Type.Null()]),
    duration_ms: Type.Integer(),
    created_at: Type.String(),
  },
  { $id: 'RouteAttempt' },
);
const Match = Type.String({ minLength: 3, maxLength: 320 });
const Url = Type.String({ maxLength: 2048 });
const Priority = Type.Integer({ minimum: 0, maximum: 1_000_000 });
const tags = ['routes'];

export const routeRoutes =
  (routes: RouteService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(Route);
    app.addSchema(RouteAttempt);
    const ref = Type.Ref('Route');
    const one = { 200: ref, ...authErrors, ...errors };
    app.addHook('preValidation', async (request) => requireWorkspaceKey(request.principal, 'manage routes'));

    endpointActions(app, { path: '/routes', tags, service: routes, ref: 'Route', view: routeView, attemptRef: 'RouteAttempt', attemptView: routeAttemptView });

    app.post(
      '/routes',
      {
        schema: {
          tags,
          security: bearerSecurity,
          body: Type.Object({ match: Match, url: Url, priority: Type.Optional(Priority) }, { additionalProperties: false }),
          response: { 201: ref, ...authErrors, ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(routeView(await routes.create(request.principal.workspaceId, request.body))),
    );

    app.patch(
      '/routes/:id',
      {
        schema: {
          tags,
          security: bearerSecurity,
          params: IdParams,
          body: Type.Object(
            {
              match: Type.Optional(Match),
              url: Type.Optional(Url),
              priority: Type.Optional(Priority),
              status: Type.Optional(Type.String({ description: 'only `active`: re-activates and resets the failure count' })),
            },
            { additionalProperties: false },
          ),
          response: one,
        },
      },
      async (request) => routeView(await routes.update(request.principal.workspaceId, request.params.id, request.body)),
    );
  };
