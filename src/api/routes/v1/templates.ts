import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { templateView, type TemplateService } from '../../../templates/service.ts';
import { decodeCursor, toPage } from '../../pagination.ts';
import { Deleted, IdParams, ListQuery, authErrors, bearerSecurity, errors, page } from '../../schemas/common.ts';

/** mustache.js parses about 0.5 s per MB, on the event loop: a part is capped well below that. */
const MAX_PART_CHARS = 262_144;

const Template = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String({ description: 'unique in the workspace; not all digits' }),
    subject: Type.String(),
    html: Type.Union([Type.String(), Type.Null()]),
    text: Type.Union([Type.String(), Type.Null()]),
    variables: Type.Array(Type.String(), { description: 'the placeholder names the template uses, sorted' }),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { $id: 'Template' },
);
const Name = Type.String({ minLength: 1, maxLength: 100, description: '1-100 characters, not all digits; a send names a template by id or name' });
const Subject = Type.String({ maxLength: 998, description: 'with `{{variable}}` placeholders, rendered unescaped' });
const Html = Type.String({ maxLength: MAX_PART_CHARS, description: '`{{variable}}` is HTML-escaped, `{{{variable}}}` and `{{& variable}}` are not' });
const Text = Type.String({ maxLength: MAX_PART_CHARS, description: 'placeholders rendered unescaped' });
const Variables = Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), {
  maxProperties: 1000,
  description: 'the values of the placeholders: strings, numbers or booleans; nested objects for dotted names',
});
const tags = ['templates'];

export const templateRoutes =
  (templates: TemplateService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(Template);
    const ref = Type.Ref('Template');
    const one = { 200: ref, ...authErrors, ...errors };

    app.get(
      '/templates',
      { schema: { tags, security: bearerSecurity, querystring: ListQuery, response: { 200: page(ref), ...authErrors, 422: errors[422] } } },
      async (request) => {
        const limit = request.query.limit ?? 20;
        const rows = await templates.list(request.principal, { beforeId: decodeCursor(request.query.cursor) ?? undefined, limit: limit + 1 });
        return toPage(
          rows.map((t) => ({ ...t, id: t.row.id })),
          limit,
          templateView,
        );
      },
    );

    app.post(
      '/templates',
      {
        schema: {
          tags,
          security: bearerSecurity,
          body: Type.Object({ name: Name, subject: Subject, html: Type.Optional(Html), text: Type.Optional(Text) }, { additionalProperties: false }),
          response: { 201: ref, ...authErrors, ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(templateView(await templates.create(request.principal, request.body))),
    );

    app.get('/templates/:id', { schema: { tags, security: bearerSecurity, params: IdParams, response: one } }, async (request) =>
      templateView(await templates.get(request.principal, request.params.id)),
    );

    app.patch(
      '/templates/:id',
      {
        schema: {
          tags,
          security: bearerSecurity,
          params: IdParams,
          body: Type.Object(
            {
              name: Type.Optional(Name),
              subject: Type.Optional(Subject),
              html: Type.Optional(Type.Union([Html, Type.Null()], { description: 'null removes the HTML part' })),
              text: Type.Optional(Type.Union([Text, Type.Null()], { description: 'null removes the text part' })),
            },
            { additionalProperties: false },
          ),
          response: one,
        },
      },
      async (request) => templateView(await templates.update(request.principal, request.params.id, request.body)),
    );

    app.delete(
      '/templates/:id',
      {
        schema: {
          tags,
          security: bearerSecurity,
          params: IdParams,
          response: { 200: Deleted, ...authErrors, ...errors },
        },
      },
      async (request) => {
        await templates.remove(request.principal, request.params.id);
        return { id: request.params.id, deleted: true };
      },
    );

    app.post(
      '/templates/:id/render',
      {
        schema: {
          tags,
          security: bearerSecurity,
          params: IdParams,
          body: Type.Object({ variables: Type.Optional(Variables) }, { additionalProperties: false }),
          response: {
            200: Type.Object({ subject: Type.String(), html: Type.Union([Type.String(), Type.Null()]), text: Type.Union([Type.String(), Type.Null()]) }),
            ...authErrors,
            ...errors,
          },
        },
      },
      async (request) => templates.render(request.principal, request.params.id, request.body?.variables ?? {}),
    );
  };
