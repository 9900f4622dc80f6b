import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireWorkspaceKey } from '../../../tenancy/principal.ts';
import { attemptView, endpointView, type WebhookService } from '../../../webhooks/service.ts';
import type { PostResult } from '../../../webhooks/post.ts';
import { IdParams, authErrors, bearerSecurity, errors } from '../../schemas/common.ts';
import { endpointActions } from './endpoint-actions.ts';

const Webhook = Type.Object(
  {
    id: Type.Integer(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    status: Type.String({ description: 'active, paused or disabled' }),
    failure_count: Type.Integer({ description: 'consecutive failed attempts, reset by any success' }),
    last_success_at: Type.Union([Type.String(), Type.Null()]),
    secret: Type.String({ description: 'signing secret, whsec_...' }),
    created_at: Type.String(),
  },
  { $id: 'Webhook' },
);
const Attempt = Type.Object(
  {
    id: Type.Integer(),
    event: Type.String(),
    email_id: Type.Integer(),
    recipient: Type.Union([Type.String(), Type.Null()], { description: 'the recipient the event is about; null for events about the whole message' }),
    attempt: Type.Integer(),
    response_code: Type.Union([Type.Integer(), Type.Null()]),
    response_body: Type.Union([Type.String(), Type.Null()], { description: 'the first 4 KB' }),
    error: Type.Union([Type.String(), Type.Null()]),
    duration_ms: Type.Integer(),
    created_at: Type.String(),
  },
  { $id: 'WebhookAttempt' },
);
const Url = Type.String({ maxLength: 2048 });
const Events = Type.Array(Type.String({ maxLength: 64 }), { maxItems: 20 });
const tags = ['webhooks'];

const TestResult = Type.Object({
  ok: Type.Boolean({ description: 'the receiver answered 2xx' }),
  response_code: Type.Union([Type.Integer(), Type.Null()]),
  response_body: Type.Union([Type.String(), Type.Null()], { description: 'the first 4 KB' }),
  error: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Integer(),
});

/** POSTs the signed test event to an endpoint now (not queued, not logged) and gives the answer. */
export type SendTestEvent = (endpoint: { url: string; secret: string }) => Promise<PostResult>;

export const webhookRoutes =
  (webhooks: WebhookService, sendTest: SendTestEvent): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(Webhook);
    app.addSchema(Attempt);
    const ref = Type.Ref('Webhook');
    const one = { 200: ref, ...authErrors, ...errors };
    app.addHook('preValidation', async (request) => requireWorkspaceKey(request.principal, 'manage webhooks'));

    endpointActions(app, { path: '/webhooks', tags, service: webhooks, ref: 'Webhook', view: endpointView, attemptRef: 'WebhookAttempt', attemptView });

    app.post(
      '/webhooks',
      {
        schema: {
          tags,
          security: bearerSecurity,
          body: Type.Object({ url: Url, events: Type.Optional(Events) }, { additionalProperties: false }),
          response: { 201: ref, ...authErrors, ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(endpointView(await webhooks.create(request.principal.workspaceId, request.body))),
    );

    app.patch(
      '/webhooks/:id',
      {
        schema: {
          tags,
          security: bearerSecurity,
          params: IdParams,
          body: Type.Object(
            {
              url: Type.Optional(Url),
              events: Type.Optional(Events),
              status: Type.Optional(Type.String({ description: 'only `active`: re-activates and resets the failure count' })),
            },
            { additionalProperties: false },
          ),
          response: one,
        },
      },
      async (request) => endpointView(await webhooks.update(request.principal.workspaceId, request.params.id, request.body)),
    );

    app.post(
      '/webhooks/:id/test',
      {
        schema: { tags, security: bearerSecurity, params: IdParams, response: { 200: TestResult, ...authErrors, ...errors } },
      },
      async (request) => {
        const row = await webhooks.get(request.principal.workspaceId, request.params.id);
        const r = await sendTest(row);
        return { ok: r.ok, response_code: r.status, response_body: r.body, error: r.error, duration_ms: r.durationMs };
      },
    );
  };
