import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { QueueAction, QueueControl } from '../../../messages/queue-control.ts';
import { authErrors, bearerSecurity, errors } from '../../schemas/common.ts';

const QueueFilterBody = Type.Object(
  {
    domain: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: "the recipients' domain" })),
    group: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'the destination group of the recipients’ domain, as GET /stats/queue lists it' })),
    stream: Type.Optional(Type.String({ description: 'transactional or broadcast' })),
    email_id: Type.Optional(Type.Integer({ minimum: 1, description: 'one message' })),
  },
  {
    additionalProperties: false,
    description: "Which of the workspace's waiting mail (a domain-scoped key: its domain's): the fields given, all of them; at least one.",
  },
);
const Affected = Type.Object({ affected: Type.Integer({ description: 'recipients held, released or canceled' }) });

const SUMMARIES: Record<QueueAction, string> = {
  hold: 'Hold waiting recipients (queued, deferred) until released; mail accepted later that matches is held too',
  release: 'Lift the holds the filter covers; their recipients are due at once and held time does not count towards the retry window',
  cancel: 'Cancel recipients not being sent (scheduled, queued, deferred, held): canceled mail is not billed and suppresses nothing',
};

/** Queue control (SPEC §11), within the key's workspace. */
export const queueRoutes =
  (queueControl: QueueControl): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const action of ['hold', 'release', 'cancel'] as const) {
      app.post(
        `/queue/${action}`,
        {
          schema: {
            tags: ['queue'],
            summary: SUMMARIES[action],
            security: bearerSecurity,
            body: QueueFilterBody,
            response: { 200: Affected, ...authErrors, 404: errors[404], 422: errors[422] },
          },
        },
        async (request) => queueControl.forKey(request.principal, action, request.body),
      );
    }
  };
