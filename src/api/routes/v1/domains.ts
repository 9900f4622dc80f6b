import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { keyView } from '../../../domains/keys.ts';
import type { DomainService } from '../../../domains/service.ts';
import { requireWorkspaceKey, type Principal } from '../../../tenancy/principal.ts';
import { toPage, decodeCursor } from '../../pagination.ts';
import { IdParams, ListQuery, authErrors, bearerSecurity, errors, page } from '../../schemas/common.ts';
import { parseAlgorithm } from '../../../domains/keys.ts';
import { AddKeyBody, CreateDomainBody, DkimKey, Domain, PatchDomainBody, RotateKeyBody } from '../../schemas/domains.ts';

const scope = (p: Principal) => ({ workspaceId: p.workspaceId, domain: p.domain });
const DomainRef = Type.Ref('Domain');
const KeyRef = Type.Ref('DkimKey');
const tags = ['domains'];

export const domainRoutes =
  (domains: DomainService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(DkimKey);
    app.addSchema(Domain);

    app.get(
      '/domains',
      {
        schema: { tags, security: bearerSecurity, querystring: ListQuery, response: { 200: page(DomainRef), ...authErrors, 422: errors[422] } },
      },
      async (request) => {
        const after = decodeCursor(request.query.cursor) ?? 0;
        const limit = request.query.limit ?? 20;
        const rows = (await domains.list(scope(request.principal))).filter((d) => d.id > after);
        return toPage(rows.slice(0, limit + 1), limit, domains.view);
      },
    );

    app.post(
      '/domains',
      {
        schema: { tags, security: bearerSecurity, body: CreateDomainBody, response: { 201: DomainRef, ...authErrors, ...errors } },
      },
      async (request, reply) => {
        requireWorkspaceKey(request.principal, 'add domains');
        const row = await domains.add(request.principal.workspaceId, request.body.name);
        return reply.code(201).send(domains.view(row));
      },
    );

    app.get(
      '/domains/:id',
      {
        schema: { tags, security: bearerSecurity, params: IdParams, response: { 200: DomainRef, ...authErrors, 404: errors[404] } },
      },
      async (request) => {
        const row = await domains.get(scope(request.principal), request.params.id);
        return { ...domains.view(row), warnings: await domains.warnings(row) };
      },
    );

    app.patch(
      '/domains/:id',
      {
        schema: { tags, security: bearerSecurity, params: IdParams, body: PatchDomainBody, response: { 200: DomainRef, ...authErrors, ...errors } },
      },
      async (request) => {
        requireWorkspaceKey(request.principal, 'change domains');
        const { open_tracking: open, click_tracking: click, pool, inbound } = request.body;
        return domains.view(await domains.update(scope(request.principal), request.params.id, { open, click, pool, inbound }));
      },
    );

    app.delete(
      '/domains/:id',
      {
        schema: {
          tags,
          security: bearerSecurity,
          params: IdParams,
          response: { 200: Type.Object({ id: Type.Integer(), name: Type.String(), deleted: Type.Boolean() }), ...authErrors, ...errors },
        },
      },
      async (request) => {
        requireWorkspaceKey(request.principal, 'remove domains');
        const row = await domains.remove(scope(request.principal), request.params.id);
        return { id: row.id, name: row.name, deleted: true };
      },
    );

    app.post(
      '/domains/:id/verify',
      {
        schema: { tags, security: bearerSecurity, params: IdParams, response: { 200: DomainRef, ...authErrors, ...errors } },
      },
      async (request) => {
        requireWorkspaceKey(request.principal, 'verify domains');
        return domains.view(await domains.verify(scope(request.principal), request.params.id));
      },
    );

    app.get(
      '/domains/:id/keys',
      {
        schema: { tags, security: bearerSecurity, params: IdParams, response: { 200: Type.Object({ data: Type.Array(KeyRef) }), ...authErrors, ...errors } },
      },
      async (request) => {
        const row = await domains.get(scope(request.principal), request.params.id);
        return { data: row.keys.map((k) => keyView(k, row.name)) };
      },
    );

    app.post(
      '/domains/:id/keys',
      {
        schema: { tags, security: bearerSecurity, params: IdParams, body: AddKeyBody, response: { 201: KeyRef, ...authErrors, ...errors } },
      },
      async (request, reply) => {
        requireWorkspaceKey(request.principal, 'manage DKIM keys');
        const row = await domains.get(scope(request.principal), request.params.id);
        const key = await domains.addKey(scope(request.principal), row.id, parseAlgorithm(request.body.algorithm)!);
        return reply.code(201).send(keyView(key, row.name));
      },
    );

    app.post(
      '/domains/:id/keys/rotate',
      {
        schema: {
          tags,
          security: bearerSecurity,
          params: IdParams,
          body: RotateKeyBody,
          response: { 201: Type.Object({ data: Type.Array(KeyRef) }), ...authErrors, ...errors },
        },
        // No body at all is a rotation of every active key, as `{}` is.
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      async (request, reply) => {
        requireWorkspaceKey(request.principal, 'manage DKIM keys');
        const row = await domains.get(scope(request.principal), request.params.id);
        const algorithm = request.body.algorithm;
        const created = await domains.rotate(scope(request.principal), row.id, {
          algorithm: algorithm ? parseAlgorithm(algorithm)! : undefined,
          overlapDays: request.body.overlap_days,
        });
        return reply.code(201).send({ data: created.map((k) => keyView(k, row.name)) });
      },
    );
  };
