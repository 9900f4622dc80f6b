// Parses the whole bounce corpus several times and prints throughput per pass, beside the same
// files read by mailparser's simpleParser (a full MIME parse, no classification) in the same run.
// Run: npx tsx bench/bounces.ts [passes]

import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { simpleParser } from 'mailparser';
import { parseReport } from '../src/bounces/index.ts';

const dir = fileURLToPath(new URL('../test/fixtures/bounces/messages/', import.meta.url));
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.eml'))
  .sort();
const messages = files.map((f) => readFileSync(dir + f)); // read once: we time parsing, not the disk
const passes = Number(process.argv[2] ?? 5);

async function timePasses(label: string, parse: (m: Buffer) => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let pass = 1; pass <= passes; pass++) {
    const t0 = performance.now();
    for (const m of messages) await parse(m);
    const ms = performance.now() - t0;
    times.push(ms);
    console.log(`${label} pass ${pass}: ${messages.length} files in ${ms.toFixed(1)} ms, ${Math.round((messages.length / ms) * 1000)} files/s`);
  }
  return times;
}

async function main() {
  const ours = await timePasses('parseReport', (m) => parseReport(m));
  const reference = await timePasses('simpleParser', (m) => simpleParser(m));
  const worst = Math.max(...ours);
  const best = Math.min(...ours);
  const ratio = Math.min(...reference) / best;
  console.log(`parseReport best ${best.toFixed(1)} ms, worst ${worst.toFixed(1)} ms per pass (budget 1000 ms): ${worst < 1000 ? 'ok' : 'TOO SLOW'}`);
  console.log(`simpleParser best ${Math.min(...reference).toFixed(1)} ms per pass: parseReport is ${ratio.toFixed(1)}x as fast`);
  if (worst >= 1000) process.exitCode = 1;
}

void main();
