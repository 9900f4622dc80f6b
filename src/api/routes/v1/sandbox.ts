import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ServiceError } from '../../../core/errors.ts';
import { captureDetail, captureSummary, type SandboxInbox } from '../../../sandbox/inbox.ts';
import { decodeCursor, toPage } from '../../pagination.ts';
import { readMime } from '../../../delivery/preview.ts';
import { EmailContent } from '../../schemas/emails.ts';
import { IdParams, authErrors, bearerSecurity, errors, page } from '../../schemas/common.ts';

const summaryFields = {
  id: Type.Integer(),
  email_id: Type.Integer({ description: 'the id POST /emails returned' }),
  recipient: Type.String(),
  envelope: Type.Object({ mail_from: Type.String({ description: 'the VERP envelope sender' }), rcpt_to: Type.String() }),
  message_id: Type.String(),
  subject: Type.String(),
  outcome: Type.String({ description: 'what the sandbox simulated: delivered, bounced, deferred, complained or unsubscribed' }),
  response: Type.String({ description: 'the SMTP reply the sandbox gave in place of the receiver' }),
  dkim: Type.Object({
    result: Type.String({ description: 'pass, fail, neutral, none, ...: the signature verified against our own published key' }),
    detail: Type.String(),
  }),
  size: Type.Integer(),
  captured_at: Type.String(),
};
const SandboxMessageSummary = Type.Object(summaryFields, { $id: 'SandboxMessageSummary' });
const SandboxMessage = Type.Object({ ...summaryFields, raw: Type.String({ description: 'the whole message as it would have been sent' }) }, { $id: 'SandboxMessage' });

const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    email_id: Type.Optional(Type.Integer({ minimum: 1, description: 'only the copies of this message' })),
  },
  { additionalProperties: false },
);

const notSandbox = () => new ServiceError('NOT_FOUND', 'Not found: the sandbox inbox exists only in sandbox mode (mailsvc serve --sandbox, or delivery.mode "sandbox")');

const tags = ['sandbox'];

/**
 * The sandbox inbox (sandbox mode only, 404 otherwise): each recipient's copy as it would have
 * been sent, newest first, within the key's workspace or domain.
 */
export const sandboxRoutes =
  (deps: { inbox: SandboxInbox; enabled: boolean }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(SandboxMessageSummary);
    app.addSchema(SandboxMessage);

    app.get(
      '/sandbox/messages',
      {
        schema: {
          tags,
          security: bearerSecurity,
          querystring: ListQuery,
          response: { 200: page(Type.Ref('SandboxMessageSummary')), ...authErrors, 404: errors[404], 422: errors[422] },
        },
      },
      async (request) => {
        if (!deps.enabled) throw notSandbox();
        const limit = request.query.limit ?? 20;
        const rows = await deps.inbox.list(request.principal, {
          limit: limit + 1,
          beforeId: decodeCursor(request.query.cursor) ?? undefined,
          emailId: request.query.email_id,
        });
        return toPage(rows, limit, captureSummary);
      },
    );

    app.get(
      '/sandbox/messages/:id',
      {
        schema: { tags, security: bearerSecurity, params: IdParams, response: { 200: Type.Ref('SandboxMessage'), ...authErrors, 404: errors[404], 422: errors[422] } },
      },
      async (request) => {
        if (!deps.enabled) throw notSandbox();
        return captureDetail(await deps.inbox.get(request.principal, request.params.id));
      },
    );

    app.get(
      '/sandbox/messages/:id/content',
      {
        schema: { tags, security: bearerSecurity, params: IdParams, response: { 200: EmailContent, ...authErrors, 404: errors[404], 422: errors[422] } },
      },
      async (request) => {
        if (!deps.enabled) throw notSandbox();
        const row = await deps.inbox.get(request.principal, request.params.id);
        return readMime(Buffer.from(row.raw));
      },
    );
  };
