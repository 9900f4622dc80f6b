import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { invalid } from '../../../core/errors.ts';
import { atItem, type AcceptService, type BatchBody } from '../../../messages/accept.ts';
import type { TemplateService } from '../../../templates/service.ts';
import { checkIdempotencyKey, requestHash } from '../../../messages/idempotency.ts';
import type { MessageQueries } from '../../../messages/queries.ts';
import { searchFilter, type SearchQuery } from '../../../messages/search.ts';
import { MESSAGE_STATUSES, RECIPIENT_STATUSES } from '../../../messages/status.ts';
import { validateSend } from '../../../messages/validate.ts';
import { messageSummary } from '../../../messages/views.ts';
import type { Clock } from '../../../core/ports.ts';
import type { Principal } from '../../../tenancy/principal.ts';
import type { RateDecision } from '../../../ratelimit/sliding.ts';
import { applyRateDecision } from '../../auth.ts';
import { decodeCursor, toPage } from '../../pagination.ts';
import { IdParams, authErrors, bearerSecurity, errors, page } from '../../schemas/common.ts';
import { BatchBody as BatchRequest, BatchResponse, Email, EmailContent, EmailSummary, ListEmailsQuery, SendBody, SendResponse } from '../../schemas/emails.ts';
import { messageSource } from '../../../delivery/preview.ts';

const tags = ['emails'];

function oneOf(field: string, value: string | undefined, allowed: readonly string[]): string | undefined {
  if (value !== undefined && !allowed.includes(value)) throw invalid(`Query parameter \`${field}\` must be one of: ${allowed.join(', ')}`);
  return value;
}

export const emailRoutes =
  (deps: {
    accept: AcceptService;
    messages: MessageQueries;
    templates: TemplateService;
    clock: Clock;
    config: { server: { hostname: string } };
    rateLimit(principal: Principal, count?: number): Promise<RateDecision>;
    rateGiveBack(principal: Principal, counted: RateDecision): Promise<void>;
  }): FastifyPluginAsyncTypebox =>
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
          (await deps.accept.accept(request.principal, validateSend(await deps.templates.applyToSend(request.principal, request.body), deps.clock.now()), idem));
        if (result.replayed) reply.header('Idempotent-Replayed', 'true');
        return reply.code(result.status).send(result.body);
      },
    );

    app.post(
      '/emails/batch',
      {
        schema: {
          tags,
          summary: 'Send up to 100 messages at once: all are accepted, or none',
          security: bearerSecurity,
          headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
          body: BatchRequest,
          response: { 201: BatchResponse, ...authErrors, ...errors },
        },
      },
      async (request, reply) => {
        const items = request.body;
        const header = request.headers['idempotency-key'];
        const idem = header === undefined ? undefined : { key: checkIdempotencyKey(String(header)), hash: requestHash(items) };
        const replayed = idem && (await deps.accept.replay<BatchBody>(request.principal, idem));
        if (replayed) return reply.header('Idempotent-Replayed', 'true').code(replayed.status).send(replayed.body);
        const now = deps.clock.now();
        const messages = [];
        for (const [i, item] of items.entries()) {
          messages.push(await atItem(i, async () => validateSend(await deps.templates.applyToSend(request.principal, item), now)));
        }
        // The request itself counted one message; each further one counts too.
        if (items.length > 1) {
          const decision = await deps.rateLimit(request.principal, items.length - 1);
          if (!decision.allowed && items.length > decision.window.limit) {
            throw invalid(
              `A batch of ${items.length} messages is more than this key's rate limit of ${decision.window.limit} requests per ${decision.window.name}; send smaller batches`,
            );
          }
          // Refused with 429, the request counts for nothing (SPEC §3): not even the one message
          // counted before its size was known.
          if (!decision.allowed) await deps.rateGiveBack(request.principal, request.rate);
          applyRateDecision(reply, decision);
        }
        const result = await deps.accept.acceptBatch(request.principal, messages, idem);
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
