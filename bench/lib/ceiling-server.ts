/**
 * The ceiling `bench/api.ts` compares POST /emails with: a bare Fastify route that parses the
 * same JSON body and inserts one row with better-sqlite3 (WAL), answering 201 after the insert.
 * No auth, no validation, no rate limit, no group commit. `bench/batch.ts` uses its batch route:
 * an array of the same bodies, inserted in one transaction.
 *
 *   node --import tsx bench/lib/ceiling-server.ts DIR NORMAL|FULL
 */
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { join } from 'node:path';

const [dir, synchronous] = process.argv.slice(2);
if (!dir || !['NORMAL', 'FULL'].includes(synchronous)) throw new Error('usage: ceiling-server.ts DIR NORMAL|FULL');
const db = new Database(join(dir, `ceiling-${synchronous.toLowerCase()}.sqlite`));
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${synchronous}`);
db.exec('CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY, from_address TEXT, recipients TEXT, subject TEXT, body TEXT, created_at INTEGER)');
const insert = db.prepare('INSERT INTO messages (from_address, recipients, subject, body, created_at) VALUES (?, ?, ?, ?, ?)');

interface Body {
  from: string;
  to: string[];
  subject: string;
  html?: string;
  text?: string;
}

const app = Fastify({ logger: false });
app.post('/api/v1/emails', async (request, reply) => {
  const b = request.body as Body;
  const { lastInsertRowid } = insert.run(b.from, JSON.stringify(b.to), b.subject, JSON.stringify({ html: b.html, text: b.text }), Date.now());
  return reply.code(201).send({ id: Number(lastInsertRowid), stream: 'transactional' });
});
const insertAll = db.transaction((items: Body[]) =>
  items.map((b) => Number(insert.run(b.from, JSON.stringify(b.to), b.subject, JSON.stringify({ html: b.html, text: b.text }), Date.now()).lastInsertRowid)),
);
app.post('/api/v1/emails/batch', async (request, reply) => {
  const ids = insertAll(request.body as Body[]);
  return reply.code(201).send({ data: ids.map((id) => ({ id, stream: 'transactional' })) });
});
const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`ceiling listening on ${address}`);
process.once('SIGTERM', () => {
  void app.close().then(() => {
    db.close();
    process.exit(0);
  });
});
