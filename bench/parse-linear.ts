// Parse time of each pathological report family (test/bounces/pathological.ts: constructs that
// once took time quadratic in their length) at 10 KB, 100 KB, 1 MB and 10 MB, in process, best
// of a few runs. The reference, measured in the same run at each size, is a normal corpus DSN
// whose returned message is padded with ordinary text lines to the same size.
// Run: npx tsx bench/parse-linear.ts [runs]

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseReportSync } from '../src/bounces/index.ts';
import { PATHOLOGICAL_KINDS, pathological } from '../test/bounces/pathological.ts';

const SIZES = [10 * 1024, 100 * 1024, 1024 * 1024, 10 * 1024 * 1024];
const runs = Number(process.argv[2] ?? 3);
const corpusDsn = readFileSync(fileURLToPath(new URL('../test/fixtures/bounces/messages/lhost-postfix-01.eml', import.meta.url)));

/** The corpus DSN with ordinary text appended to its returned message, `bytes` long in all. */
function normalDsn(bytes: number): Buffer {
  const line = 'The quick brown fox jumps over the lazy dog, and the report goes on as reports do.\n';
  const padding = line.repeat(Math.max(0, Math.ceil((bytes - corpusDsn.length) / line.length)));
  return Buffer.concat([corpusDsn, Buffer.from(padding)]).subarray(0, Math.max(bytes, corpusDsn.length));
}

function bestMs(raw: Buffer): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    parseReportSync(raw);
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

const label = (bytes: number) => (bytes >= 1024 * 1024 ? `${bytes / 1024 / 1024} MB` : `${bytes / 1024} KB`);
const ms = (t: number) => (t < 10 ? t.toFixed(2) : t.toFixed(0));

const reference = SIZES.map((size) => bestMs(normalDsn(size)));
console.log(`| family | ${SIZES.map(label).join(' | ')} | 10 MB / 1 MB | 10 MB vs reference |`);
console.log(`| --- | ${SIZES.map(() => '---').join(' | ')} | --- | --- |`);
for (const kind of PATHOLOGICAL_KINDS) {
  const times = SIZES.map((size) => bestMs(pathological(kind, size)));
  const growth = times[3]! / times[2]!;
  console.log(`| ${kind} | ${times.map((t) => `${ms(t)} ms`).join(' | ')} | ${growth.toFixed(1)}× | ${(times[3]! / reference[3]!).toFixed(1)}× |`);
}
console.log(`| reference: corpus DSN padded | ${reference.map((t) => `${ms(t)} ms`).join(' | ')} | ${(reference[3]! / reference[2]!).toFixed(1)}× | 1.0× |`);
