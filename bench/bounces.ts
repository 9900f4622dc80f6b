// Parses the whole bounce corpus several times and prints throughput per pass.
// Run: npx tsx bench/bounces.ts [passes]

import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseReport } from '../src/bounces/index.ts';

const dir = fileURLToPath(new URL('../test/fixtures/bounces/messages/', import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith('.eml')).sort();
const messages = files.map((f) => readFileSync(dir + f)); // read once: we time parsing, not the disk
const passes = Number(process.argv[2] ?? 5);

async function main() {
  const times: number[] = [];
  for (let pass = 1; pass <= passes; pass++) {
    const t0 = performance.now();
    for (const m of messages) await parseReport(m);
    const ms = performance.now() - t0;
    times.push(ms);
    console.log(`pass ${pass}: ${messages.length} files in ${ms.toFixed(1)} ms, ${Math.round((messages.length / ms) * 1000)} files/s`);
  }
  const worst = Math.max(...times);
  const best = Math.min(...times);
  console.log(`best ${best.toFixed(1)} ms, worst ${worst.toFixed(1)} ms per pass (budget 1000 ms): ${worst < 1000 ? 'ok' : 'TOO SLOW'}`);
  if (worst >= 1000) process.exitCode = 1;
}

void main();
