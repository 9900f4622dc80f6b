/**
 * The room rules of docs/ARCHITECTURE.md that test/architecture.test.ts enforces, as data: the
 * test checks the code against them and the document's table (its ✔ marks) against them, so
 * the table cannot promise a rule the test does not check, nor drop one it does.
 */

/** Rooms that import nothing of ours outside themselves. */
export const PURE_ROOMS = ['core', 'bounces', 'dkim', 'tokens', 'shaping'];

/** Packages only some rooms may import: `names` as the table says them, `pattern` as imports spell them. */
export const PACKAGE_ROOMS = [
  { names: 'Fastify', pattern: '(fastify|@fastify/[a-z-]+)', rooms: ['api', 'roles'] },
  { names: 'smtp-server', pattern: 'smtp-server', rooms: ['inbound', 'submission'] },
  { names: 'knex, pg or better-sqlite3', pattern: '(knex|pg|better-sqlite3)', rooms: ['store'] },
  { names: 'mustache', pattern: 'mustache', rooms: ['templates'] },
];

/** The one room that builds a query. */
export const QUERY_ROOM = 'store';
