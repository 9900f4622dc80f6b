import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { inboundSummaryView, type InboundMessages } from '../../../inbound/messages.ts';
import { requireWorkspaceKey } from '../../../tenancy/principal.ts';
import { decodeCursor, toPage } from '../../pagination.ts';
import { IdParams, ListQuery, authErrors, bearerSecurity, errors, page } from '../../schemas/common.ts';

const Address = Type.Object({ name: Type.String(), address: Type.String() });
const Envelope = Type.Object({ from: Type.String({ description: 'MAIL FROM; empty for the null sender' }), to: Type.Array(Type.String()) });
const Summary = Type.Object(
  {
    id: Type.Integer(),
    received_at: Type.String(),
    envelope: Envelope,
    from: Type.Union([Address, Type.Null()]),
    subject: Type.Union([Type.String(), Type.Null()]),
    size: Type.Integer({ description: 'bytes received' }),
    remote_ip: Type.String(),
  },
  { $id: 'InboundSummary' },
);
const Nullable = (t: ReturnType<typeof Type.String>) => Type.Union([t, Type.Null()]);
const Received = Type.Object(
  {
    id: Type.Integer(),
    received_at: Type.String(),
    envelope: Envelope,
    from: Type.Union([Address, Type.Null()]),
    to: Type.Array(Address),
    cc: Type.Array(Address),
    reply_to: Type.Array(Address),
    subject: Nullable(Type.String()),
    message_id: Nullable(Type.String()),
    in_reply_to: Nullable(Type.String()),
    references: Type.Array(Type.String()),
    date: Nullable(Type.String()),
    text: Nullable(Type.String()),
    html: Nullable(Type.String()),
    headers: Type.Array(Type.Tuple([Type.String(), Type.String()]), { description: 'every header field as received, in order' }),
    attachments: Type.Array(
      Type.Object({
        filename: Nullable(Type.String()),
        content_type: Type.String(),
        size: Type.Integer(),
        content_id: Type.Optional(Type.String()),
        url: Type.String(),
      }),
    ),
    auth: Type.Object({ spf: Type.String(), dkim: Type.String(), dmarc: Type.String(), arc: Type.String() }),
    spam: Type.Null(),
  },
  { $id: 'InboundMessage' },
);
const tags = ['inbound'];

/** Messages received for routes (SPEC §14): the list, a message, its raw bytes and its attachments. */
export const inboundRoutes =
  (inbound: InboundMessages): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(Summary);
    app.addSchema(Received);
    app.addHook('preValidation', async (request) => requireWorkspaceKey(request.principal, 'read received mail'));

    app.get(
      '/inbound',
      { schema: { tags, security: bearerSecurity, querystring: ListQuery, response: { 200: page(Type.Ref('InboundSummary')), ...authErrors, ...errors } } },
      async (request) => {
        const limit = request.query.limit ?? 20;
        const rows = await inbound.list(request.principal.workspaceId, { beforeId: decodeCursor(request.query.cursor) ?? undefined, limit: limit + 1 });
        return toPage(rows, limit, inboundSummaryView);
      },
    );

    app.get(
      '/inbound/:id',
      { schema: { tags, security: bearerSecurity, params: IdParams, response: { 200: Type.Ref('InboundMessage'), ...authErrors, ...errors } } },
      async (request) => inbound.view(request.principal.workspaceId, request.params.id),
    );

    app.get('/inbound/:id/raw', { schema: { tags, security: bearerSecurity, params: IdParams, response: { ...authErrors, ...errors } } }, async (request, reply) =>
      reply.type('message/rfc822').send(await inbound.rawBytes(request.principal.workspaceId, request.params.id)),
    );

    app.get(
      '/inbound/:id/attachments/:n',
      {
        schema: {
          tags,
          security: bearerSecurity,
          params: Type.Object({ id: Type.Integer({ minimum: 1 }), n: Type.Integer({ minimum: 0, maximum: 100_000 }) }),
          response: { ...authErrors, ...errors },
        },
      },
      async (request, reply) => {
        const file = await inbound.attachment(request.principal.workspaceId, request.params.id, request.params.n);
        // Served as a download, never rendered on our origin: the bytes are a stranger's.
        const name = (file.filename ?? `attachment-${request.params.n}`).replace(/[^\w.-]+/g, '_');
        return reply
          .type(file.content_type.replace(/[^\w.+/-]/g, '') || 'application/octet-stream')
          .header('content-disposition', `attachment; filename="${name}"`)
          .header('x-content-type-options', 'nosniff')
          .send(file.content);
      },
    );
  };
