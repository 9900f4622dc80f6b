/**
 * V8's `--trace-opt` lines summed over a bench run: how many TurboFan compilations, the time they
 * took, and which functions were compiled more than once with no deoptimisation of their own in
 * between (bench/NOTES.md, "Closures compiled again": on Node 20 a closure made per call loses its
 * optimised code at every full collection). The lines come from a bench run with
 * `MAILSVC_BENCH_NODE_ARGS="--trace-opt --trace-deopt" MAILSVC_BENCH_CHILD_LOG=FILE`. Every thread
 * writes to the same stream, so a line cut by another thread's is not counted: the figures are
 * close, not exact.
 *
 *   node --import tsx bench/lib/jit-summary.ts FILE [TOP]
 */
import { readFileSync } from 'node:fs';

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: jit-summary.ts FILE [TOP]');
const top = Number(topArg ?? 15);

// [completed compiling 0x1e3f13b42439 <JSFunction insertMany (sfi = 0x2f5aef87f9a1)> (target TURBOFAN) - took 0.098, 38.283, 0.359 ms]
const COMPILED = /^\[completed compiling 0x[0-9a-f]+ <JSFunction (.*?) ?\(sfi = (0x[0-9a-f]+)\)> \(target TURBOFAN\) - took ([\d.]+), ([\d.]+), ([\d.]+) ms\]/;
// [bailout (kind: deopt-eager, reason: wrong map): begin. deoptimizing 0x... <JSFunction insertMany (sfi = 0x...)>, ...
const DEOPTIMISED = /^\[bailout \(kind: [^)]*\): begin\. deoptimizing 0x[0-9a-f]+ <JSFunction .*?\(sfi = (0x[0-9a-f]+)\)>/;

interface Fn {
  name: string;
  compilations: number;
  ms: number;
  /** Compilations after the first that no deoptimisation of this function preceded. */
  again: number;
  againMs: number;
  deoptimised: boolean;
}

const functions = new Map<string, Fn>();
let compilations = 0;
let ms = 0;
let deopts = 0;
for (const line of readFileSync(file, 'utf8').split('\n')) {
  const d = DEOPTIMISED.exec(line);
  if (d) {
    deopts += 1;
    const fn = functions.get(d[1]!);
    if (fn) fn.deoptimised = true;
    continue;
  }
  const c = COMPILED.exec(line);
  if (!c) continue;
  const [, name, sfi, prepare, execute, finalize] = c;
  const took = Number(prepare) + Number(execute) + Number(finalize);
  compilations += 1;
  ms += took;
  const fn = functions.get(sfi!);
  if (!fn) {
    functions.set(sfi!, { name: name || '(anonymous)', compilations: 1, ms: took, again: 0, againMs: 0, deoptimised: false });
    continue;
  }
  fn.compilations += 1;
  fn.ms += took;
  if (!fn.deoptimised) {
    fn.again += 1;
    fn.againMs += took;
  }
  fn.deoptimised = false;
}

const again = [...functions.values()].filter((f) => f.again > 0);
const againMs = again.reduce((sum, f) => sum + f.againMs, 0);
console.log(`${compilations} TurboFan compilations of ${functions.size} functions, ${(ms / 1000).toFixed(2)} s; ${deopts} deoptimisations`);
console.log(`compiled again with no deoptimisation between: ${again.reduce((sum, f) => sum + f.again, 0)} times, ${(againMs / 1000).toFixed(2)} s`);
for (const f of again.sort((a, b) => b.againMs - a.againMs).slice(0, top)) {
  console.log(`  ${f.againMs.toFixed(0).padStart(6)} ms  ${String(f.again).padStart(3)}x again  ${f.name}`);
}
