import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { invalid } from '../../../core/errors.ts';
import type { AcceptService } from '../../../messages/accept.ts';
import { checkIdempotencyKey, requestHash } from '../../../messages/idempotency.ts';
import type { MessageQueries } from '../../../messages/queries.ts';
import { searchFilter, type SearchQuery } from '../../../messages/search.ts';
import { MESSAGE_STATUSES, RECIPIENT_STATUSES } from '../../../messages/status.ts';
import { validateSend } from '../../../messages/validate.ts';
import { messageSummary } from '../../../messages/views.ts';
import type { Clock } from '../../../core/ports.ts';
import { decodeCursor, toPage } from '../../pagination.ts';
import { IdParams, authErrors, bearerSecurity, errors, page } from '../../schemas/common.ts';
import { Email, EmailContent, EmailSummary, ListEmailsQuery, SendBody, SendResponse } from '../../schemas/emails.ts';
import { messageSource } from '../../../delivery/preview.ts';

const tags = ['emails'];

function oneOf(field: string, value: string | undefined, allowed: readonly string[]): string | undefined {
  if (value !== undefined && !allowed.includes(value)) throw invalid(`Query parameter \`${field}\` must be one of: ${allowed.join(', ')}`);
  return value;
}

export const emailRoutes =
  (deps: { accept: AcceptService; messages: MessageQueries; clock: Clock; config: { server: { hostname: string } } }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(Email);
    app.addSchema(EmailSummary);

    app.post(
      '/emails',
      {
        schema: {
          tags,
          security: bearerSecurity,
          headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
          body: SendBody,
          response: { 201: SendResponse, ...authErrors, ...errors },
        },
      },
      async (request, reply) => {
        const header = request.headers['idempotency-key'];
        const idem = header === undefined ? undefined : { key: checkIdempotencyKey(String(header)), hash: requestHash(request.body) };
        // A retry gets its original answer even if the request would no longer validate.
        const result =
          (idem && (await deps.accept.replay(request.principal, idem))) ||
          (await deps.accept.accept(request.principal, validateSend(request.body, deps.clock.now()), idem));
        if (result.replayed) reply.header('Idempotent-Replayed', 'true');
        return reply.code(result.status).send(result.body);
      },
    );

    app.get(
      '/emails/:id',
      {
        schema: { tags, security: bearerSecurity, params: IdParams, response: { 200: Type.Ref('Email'), ...authErrors, 404: errors[404], 422: errors[422] } },
      },
      async (request) => deps.messages.detail(request.principal, request.params.id),
    );

    app.get(
      '/emails/:id/content',
      {
        schema: { tags, security: bearerSecurity, params: IdParams, response: { 200: EmailContent, ...authErrors, 404: errors[404], 422: errors[422] } },
      },
      async (request) => messageSource(await deps.messages.visible(request.principal, request.params.id), deps.config.server.hostname),
    );

    app.get(
      '/emails',
      {
        schema: { tags, security: bearerSecurity, querystring: ListEmailsQuery, response: { 200: page(Type.Ref('EmailSummary')), ...authErrors, 422: errors[422] } },
      },
      async (request) => {
        const q = request.query;
        const limit = q.limit ?? 20;
        const rows = await deps.messages.list(request.principal, {
          status: oneOf('status', q.status, MESSAGE_STATUSES),
          stream: oneOf('stream', q.stream, ['transactional', 'broadcast']),
          recipient: q.recipient,
          recipientStatus: oneOf('recipient_status', q.recipient_status, RECIPIENT_STATUSES),
          beforeId: decodeCursor(q.cursor) ?? undefined,
          limit: limit + 1,
          ...searchFilter(q as SearchQuery),
        });
        return toPage(rows, limit, messageSummary);
      },
    );

    app.post(
      '/emails/:id/cancel',
      {
        schema: { tags, security: bearerSecurity, params: IdParams, response: { 200: Type.Ref('Email'), ...authErrors, 404: errors[404], 422: errors[422] } },
      },
      async (request) => deps.messages.cancel(request.principal, request.params.id),
    );
  };
