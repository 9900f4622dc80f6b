import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireWorkspaceKey } from '../../../tenancy/principal.ts';
import type { UsageService } from '../../../usage/service.ts';
import { authErrors, bearerSecurity, errors } from '../../schemas/common.ts';

export const usageRoutes =
  (usage: UsageService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/usage',
      {
        schema: {
          tags: ['usage'],
          security: bearerSecurity,
          querystring: Type.Object({ from: Type.Optional(Type.String()), to: Type.Optional(Type.String()) }, { additionalProperties: false }),
          response: {
            200: Type.Object({
              from: Type.String(),
              to: Type.String(),
              data: Type.Array(Type.Object({ day: Type.String(), stream: Type.String(), count: Type.Integer() })),
              totals: Type.Object({ transactional: Type.Integer(), broadcast: Type.Integer() }),
            }),
            ...authErrors,
            403: errors[403],
            422: errors[422],
          },
        },
      },
      async (request) => {
        requireWorkspaceKey(request.principal, 'read workspace usage');
        return usage.report(request.principal.workspaceId, request.query);
      },
    );
  };
