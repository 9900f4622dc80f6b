/**
 * What the subject search index (`message_subjects`, FTS5 with the trigram tokenizer, migration
 * 019) costs each message stored on SQLite, three ways: indexed by each commit's insert, as the
 * trigger before migration 025 did (`per-commit`); in batches of `batch` messages, as
 * `store/subject-index.ts` does now (`batched`); and not at all (`none`, the reference). The
 * messages have varied subjects of about 50 characters and are inserted `perCommit` a commit
 * (a busy relay commits about seven at a time). The arms alternate, each on a fresh copy of a
 * migrated database. Prints CPU per message (this thread, where SQLite runs) and WAL frames
 * written per message (checkpoints off, so the WAL holds every frame of the run).
 *
 *   npm run bench -- subject-index [messages=20000] [perCommit=7] [runs=3] [batch=1000]
 */
import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { machineLine } from './lib/machine.ts';
import { fmt, showSpread, spread } from './lib/proc.ts';

const total = Number(process.argv[2] ?? 20_000);
const perCommit = Number(process.argv[3] ?? 7);
const runs = Number(process.argv[4] ?? 3);
const batch = Number(process.argv[5] ?? 1_000);

const ARMS = ['per-commit', 'batched', 'none'] as const;
type Arm = (typeof ARMS)[number];

const WORDS =
  'order shipped invoice receipt password reset welcome your account update weekly digest news sale offer confirm trial payment failed ticket reply meeting reminder'.split(
    ' ',
  );

/** Subjects like applications send, the same for both arms: a fixed seed. */
function subjects(n: number): string[] {
  let seed = 1;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const word = () => WORDS[Math.floor(next() * WORDS.length)]!;
  return Array.from({ length: n }, (_, i) => `${word()} ${word()} #${100_000 + i} for ${word()} customer ${Math.floor(next() * 1e6)}`);
}

interface Run {
  cpuMsPerMessage: number;
  framesPerMessage: number;
}

function run(template: string, dir: string, arm: Arm, texts: string[]): Run {
  const file = join(dir, `${arm}.sqlite`);
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
  copyFileSync(template, file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('wal_autocheckpoint = 0');
  const insert = db.prepare(
    `insert into messages (workspace_id, api_key_id, domain, stream, status, source, from_header, from_address, subject, envelope, message_id_header, created_at)
     values (1, null, 'acme.test', 'transactional', 'queued', 'api', 'orders@acme.test', 'orders@acme.test', ?, '{}', ?, ?)`,
  );
  // The statements of `subjectIndex.indexPending`, and the trigger's insert for a commit's rows.
  const index = db.prepare('insert into message_subjects (rowid, subject) select id, subject from messages where id > ? and id <= ?');
  const mark = db.prepare('update message_subjects_upto set id = ?');
  let upto = 0;
  const indexUpTo = (last: number) => {
    index.run(upto, last);
    mark.run(last);
    upto = last;
  };
  const walBefore = statSync(`${file}-wal`).size;
  const before = process.cpuUsage();
  for (let i = 0; i < texts.length; i += perCommit) {
    const end = Math.min(texts.length, i + perCommit);
    db.exec('begin immediate');
    let last = 0;
    for (let j = i; j < end; j++) last = Number(insert.run(texts[j], `<${j}.bench@acme.test>`, j).lastInsertRowid);
    if (arm === 'per-commit' || (arm === 'batched' && (last - upto >= batch || end === texts.length))) indexUpTo(last);
    db.exec('commit');
  }
  const used = process.cpuUsage(before);
  const frames = (statSync(`${file}-wal`).size - walBefore) / (4096 + 24);
  db.close();
  return { cpuMsPerMessage: (used.user + used.system) / 1000 / texts.length, framesPerMessage: frames / texts.length };
}

const dir = mkdtempSync(join(tmpdir(), 'mailsvc-bench-subjects-'));
try {
  const template = join(dir, 'template.sqlite');
  const knex = createDb({ client: 'sqlite', connection: { filename: template }, pool: 1 });
  await migrate(knex);
  await knex('workspaces').insert({ name: 'bench', plan: 'free', rate_per_minute: 10, rate_per_hour: 100, created_at: 0 });
  await knex.destroy();

  console.log(machineLine());
  console.log(
    `subject-index: ${total.toLocaleString('en-US')} messages with subjects of about 50 characters, ${perCommit} a commit, ` +
      `indexed per commit, in batches of ${batch.toLocaleString('en-US')}, or not at all; ${runs} runs of each`,
  );
  const texts = subjects(total);
  const results: Record<Arm, Run[]> = { 'per-commit': [], batched: [], none: [] };
  for (let r = 1; r <= runs; r++) {
    for (const arm of ARMS) {
      const result = run(template, dir, arm, texts);
      results[arm].push(result);
      console.log(`run ${r} ${arm.padEnd(10)} ${fmt(result.cpuMsPerMessage, 4)} ms CPU/msg, ${fmt(result.framesPerMessage, 2)} WAL frames/msg`);
    }
  }
  const median = (arm: Arm, key: keyof Run) => spread(results[arm].map((x) => x[key])).median;
  for (const arm of ARMS) {
    console.log(
      `${arm.padEnd(10)} ms CPU/msg ${showSpread(
        results[arm].map((x) => x.cpuMsPerMessage),
        4,
      )}, WAL frames/msg ${fmt(median(arm, 'framesPerMessage'), 2)}`,
    );
  }
  const cost = (arm: Arm) =>
    `${fmt(median(arm, 'cpuMsPerMessage') - median('none', 'cpuMsPerMessage'), 4)} ms of CPU and ${fmt(median(arm, 'framesPerMessage') - median('none', 'framesPerMessage'), 2)} WAL frames`;
  console.log(`the subject index costs a message ${cost('per-commit')} indexed per commit, ${cost('batched')} in batches (medians, over none)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
