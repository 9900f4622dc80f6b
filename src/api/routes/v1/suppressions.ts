import { Readable } from 'node:stream';
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { checkStream, suppressionView, type SuppressionService } from '../../../suppression/service.ts';
import { CSV_COLUMNS, csvOfPages } from '../../../suppression/csv.ts';
import { invalid } from '../../../core/errors.ts';
import { requireWorkspaceKey } from '../../../tenancy/principal.ts';
import { decodeCursor, toPage } from '../../pagination.ts';
import { authErrors, bearerSecurity, errors, page } from '../../schemas/common.ts';

const Suppression = Type.Object(
  {
    address: Type.String(),
    stream: Type.String(),
    reason: Type.String({ description: 'bounce, complaint, unsubscribe or manual' }),
    email_id: Type.Union([Type.Integer(), Type.Null()]),
    created_at: Type.String(),
  },
  { $id: 'Suppression' },
);
const Cause = Type.Union(
  [
    Type.Object({
      event: Type.String({ description: 'email.bounced, email.complained or email.unsubscribed' }),
      occurred_at: Type.String(),
      bounce_type: Type.Union([Type.String(), Type.Null()]),
      response: Type.String({ description: "the receiving server's or the report's own words" }),
      reporting_mta: Type.String(),
      status: Type.Union([Type.String(), Type.Null()], { description: 'bounces: the enhanced status code' }),
      reason: Type.Union([Type.String(), Type.Null()], { description: "bounces: the classifier's reason word, e.g. user_unknown" }),
      decided_by: Type.Array(Type.String(), { description: 'bounces: the classifier rules that decided, as `mailsvc bounce explain` lists them' }),
      feedback_type: Type.Union([Type.String(), Type.Null()], { description: 'complaints: the ARF feedback type' }),
    }),
    Type.Null(),
  ],
  { description: 'the event that put the address on the list; null for a manual entry or once retention pruned it' },
);
const EntryParams = Type.Object({ stream: Type.String(), address: Type.String({ maxLength: 320 }) });
const tags = ['suppressions'];
/** The import's `csv` field, in UTF-16 code units (a little stricter than characters). */
const CSV_MAX_CHARS = 5_000_000;

/** The export's JSON answer, `{"csv": ..., "count": N}`, written as the CSV comes. */
async function* jsonEnvelope(csv: AsyncIterable<string>, count: () => number): AsyncGenerator<string> {
  yield '{"csv":"';
  for await (const text of csv) yield JSON.stringify(text).slice(1, -1);
  yield `","count":${count()}}`;
}

export const suppressionRoutes =
  (suppressions: SuppressionService): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(Suppression);
    const ref = Type.Ref('Suppression');

    app.get(
      '/suppressions',
      {
        schema: {
          tags,
          security: bearerSecurity,
          querystring: Type.Object(
            {
              stream: Type.Optional(Type.String()),
              search: Type.Optional(Type.String({ maxLength: 320, description: 'only addresses containing this text' })),
              limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
              cursor: Type.Optional(Type.String({ maxLength: 200 })),
            },
            { additionalProperties: false },
          ),
          response: { 200: page(ref), ...authErrors, 422: errors[422] },
        },
      },
      async (request) => {
        const limit = request.query.limit ?? 20;
        const rows = await suppressions.list(request.principal.workspaceId, {
          stream: request.query.stream,
          domain: request.principal.domain,
          afterId: decodeCursor(request.query.cursor) ?? undefined,
          search: request.query.search || undefined,
          limit: limit + 1,
        });
        return toPage(rows, limit, suppressionView);
      },
    );

    app.post(
      '/suppressions',
      {
        schema: {
          tags,
          security: bearerSecurity,
          body: Type.Object({ address: Type.String({ maxLength: 320 }), stream: Type.String() }, { additionalProperties: false }),
          response: { 200: ref, 201: ref, ...authErrors, ...errors },
        },
      },
      async (request, reply) => {
        requireWorkspaceKey(request.principal, 'change suppression lists');
        const { row, created } = await suppressions.add(request.principal.workspaceId, { ...request.body, reason: 'manual' });
        return reply.code(created ? 201 : 200).send(suppressionView(row));
      },
    );

    app.get(
      '/suppressions/export',
      {
        schema: {
          tags,
          security: bearerSecurity,
          description:
            'Streamed, page by page. As JSON `{csv, count}` by default; as a CSV file (`Content-Disposition: attachment`) with `format=csv` or `Accept: text/csv`. ' +
            "A domain-scoped key exports only the entries its domain's mail caused.",
          querystring: Type.Object(
            {
              stream: Type.Optional(Type.String()),
              format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')], { description: 'default: csv when Accept names text/csv, else json' })),
            },
            { additionalProperties: false },
          ),
          response: {
            200: {
              description: `columns ${CSV_COLUMNS.join(', ')}, as \`mailsvc suppression export\` writes them`,
              content: {
                'application/json': { schema: Type.Object({ csv: Type.String(), count: Type.Integer() }) },
                'text/csv': { schema: Type.String() },
              },
            },
            ...authErrors,
            422: errors[422],
          },
        },
      },
      async (request, reply) => {
        const { stream } = request.query;
        // Checked here, before the first byte: a bad stream is still a 422.
        const pages = suppressions.exportPages(request.principal.workspaceId, { stream, domain: request.principal.domain });
        const format = request.query.format ?? (/\btext\/csv\b/i.test(request.headers.accept ?? '') ? 'csv' : 'json');
        let count = 0;
        const csv = csvOfPages(pages, (n) => (count += n));
        // A byte stream with a small buffer: the next page is read only once the client took
        // the last one, so a slow reader holds one page in memory, not the list.
        const body = Readable.from(format === 'csv' ? csv : jsonEnvelope(csv, () => count), { objectMode: false, highWaterMark: 16 * 1024 });
        if (format === 'csv') {
          reply.header('content-type', 'text/csv; charset=utf-8');
          reply.header('content-disposition', `attachment; filename="suppressions${stream ? `-${stream}` : ''}.csv"`);
        } else {
          reply.header('content-type', 'application/json; charset=utf-8');
        }
        return reply.send(body);
      },
    );

    app.post(
      '/suppressions/import',
      {
        schema: {
          tags,
          security: bearerSecurity,
          description: `Read and written in chunks, each its own short transaction; at most \`suppression.importMaxRows\` lines after the header (413 over it, nothing imported).`,
          body: Type.Object(
            {
              csv: Type.String({
                description: `at most ${CSV_MAX_CHARS} characters: a header row naming \`address\` (and \`stream\` unless given below); \`reason\` optional`,
              }),
              stream: Type.Optional(Type.String({ description: 'the stream of lines that name none' })),
            },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({
              added: Type.Integer({ description: 'new entries' }),
              existing: Type.Integer({ description: 'lines already on their list' }),
              problems: Type.Array(Type.Object({ line: Type.Integer(), error: Type.String() }), { description: 'lines skipped, each with why' }),
              records: Type.Integer({ description: 'lines read after the header: added + existing + problems' }),
              chunks: Type.Integer({ description: 'the short transactions the entries were written in, one after another' }),
            }),
            ...authErrors,
            ...errors,
          },
        },
      },
      async (request) => {
        requireWorkspaceKey(request.principal, 'change suppression lists');
        // Checked here rather than by the schema's maxLength, which counts code points one by one:
        // tens of milliseconds of the event loop for a 5 MB field.
        if (request.body.csv.length > CSV_MAX_CHARS) throw invalid(`Field \`csv\` must NOT have more than ${CSV_MAX_CHARS} characters`);
        const stream = request.body.stream === undefined ? undefined : checkStream(request.body.stream);
        const result = await suppressions.importCsv(request.principal.workspaceId, request.body.csv, { defaultStream: stream, capped: true });
        return { added: result.added, existing: result.existing, problems: result.problems, records: result.records, chunks: result.chunks };
      },
    );

    app.get(
      '/suppressions/:stream/:address',
      {
        schema: {
          tags,
          security: bearerSecurity,
          params: EntryParams,
          response: { 200: Type.Object({ ...Suppression.properties, cause: Cause }), ...authErrors, 404: errors[404], 422: errors[422] },
        },
      },
      async (request) => {
        const { row, cause } = await suppressions.explain(request.principal.workspaceId, request.params.stream, request.params.address, request.principal.domain);
        return { ...suppressionView(row), cause };
      },
    );

    app.delete(
      '/suppressions/:stream/:address',
      {
        schema: {
          tags,
          security: bearerSecurity,
          params: EntryParams,
          response: { 200: Type.Object({ address: Type.String(), stream: Type.String(), deleted: Type.Boolean() }), ...authErrors, ...errors },
        },
      },
      async (request) => {
        requireWorkspaceKey(request.principal, 'change suppression lists');
        await suppressions.remove(request.principal.workspaceId, request.params.stream, request.params.address);
        return { address: request.params.address.toLowerCase(), stream: request.params.stream, deleted: true };
      },
    );
  };
