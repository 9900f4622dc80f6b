import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { keyView, type TenancyService } from '../../../tenancy/service.ts';
import { requireWorkspaceKey } from '../../../tenancy/principal.ts';
import { IdParams, authErrors, bearerSecurity, errors } from '../../schemas/common.ts';

const ApiKey = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    prefix: Type.String({ description: 'the first 8 characters, to recognise the key' }),
    scope: Type.String({ description: '`workspace` or `domain:<name>`' }),
    created_at: Type.String(),
    revoked_at: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'ApiKey' },
);
const CreatedApiKey = Type.Composite([Type.Omit(ApiKey, []), Type.Object({ api_key: Type.String({ description: 'shown once' }) })]);
const CreateBody = Type.Object(
  { name: Type.Optional(Type.String({ maxLength: 200 })), domain: Type.Optional(Type.String({ maxLength: 253 })) },
  { additionalProperties: false },
);
const tags = ['api-keys'];

export const apiKeyRoutes =
  (tenancy: TenancyService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(ApiKey);
    app.addHook('preValidation', async (request) => requireWorkspaceKey(request.principal, 'manage API keys'));

    app.get(
      '/api-keys',
      {
        schema: {
          tags,
          security: bearerSecurity,
          response: { 200: Type.Object({ data: Type.Array(Type.Ref('ApiKey')), next_cursor: Type.Null() }), ...authErrors, 403: errors[403] },
        },
      },
      async (request) => ({ data: (await tenancy.listKeys(request.principal.workspaceId)).map(keyView), next_cursor: null }),
    );

    app.post(
      '/api-keys',
      {
        schema: { tags, security: bearerSecurity, body: CreateBody, response: { 201: CreatedApiKey, ...authErrors, ...errors } },
      },
      async (request, reply) => {
        const { secret, row } = await tenancy.createKey(request.principal.workspaceId, request.body);
        return reply.code(201).send({ ...keyView(row), api_key: secret });
      },
    );

    app.delete(
      '/api-keys/:id',
      {
        schema: { tags, security: bearerSecurity, params: IdParams, response: { 200: Type.Ref('ApiKey'), ...authErrors, ...errors } },
      },
      async (request) => keyView(await tenancy.revokeKey(request.params.id, request.principal.workspaceId)),
    );
  };
