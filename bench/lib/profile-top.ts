/**
 * The top costs of a V8 CPU profile (`node --cpu-prof`): self time by function and by package
 * or source file, and inclusive time of our own functions.
 *
 *   node --import tsx bench/lib/profile-top.ts FILE.cpuprofile [rows=25]
 */
import { readFileSync } from 'node:fs';
import { frameLabel, where, type CallFrame } from './frames.ts';

interface Node {
  id: number;
  callFrame: CallFrame;
  hitCount: number;
  children?: number[];
}

const [file, rowsArg] = process.argv.slice(2);
const rows = Number(rowsArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const total = profile.nodes.reduce((s, n) => s + n.hitCount, 0);

const label = (n: Node) => frameLabel(n.callFrame);

const selfBy = (key: (n: Node) => string) => {
  const m = new Map<string, number>();
  for (const n of profile.nodes) m.set(key(n), (m.get(key(n)) ?? 0) + n.hitCount);
  return [...m].sort((a, b) => b[1] - a[1]).slice(0, rows);
};
const pct = (h: number) => `${((100 * h) / total).toFixed(1).padStart(5)}%`;

// Inclusive: every distinct frame on a sample's stack gets the sample once.
const inclusive = new Map<string, number>();
for (const n of profile.nodes) {
  if (n.hitCount === 0) continue;
  const seen = new Set<string>();
  for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
    const f = byId.get(id)!;
    if (!/\/(src|dist)\//.test(f.callFrame.url) && !/node_modules\/(knex|fastify|better-sqlite3|pino|avvio|ajv)/.test(f.callFrame.url)) continue;
    const key = label(f);
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + n.hitCount);
  }
}

console.log(`${total} samples\n\nself time by package/file:`);
for (const [k, h] of selfBy((n) => where(n.callFrame.url))) console.log(`${pct(h)}  ${k}`);
console.log('\nself time by function:');
for (const [k, h] of selfBy(label)) console.log(`${pct(h)}  ${k}`);
console.log('\ninclusive time, our code and main libraries:');
for (const [k, h] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, rows)) console.log(`${pct(h)}  ${k}`);
