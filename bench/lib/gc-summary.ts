/**
 * V8's `--trace-gc` lines summed per isolate (the event loop and each worker thread are one
 * each): how many scavenges and mark-compacts, the time they held their thread, and the bytes a
 * scavenge freed, the young generation's garbage, per message. The lines come from a bench run
 * with `MAILSVC_BENCH_NODE_ARGS=--trace-gc MAILSVC_BENCH_CHILD_LOG=FILE`.
 *
 *   node --import tsx bench/lib/gc-summary.ts FILE MESSAGES
 */
import { readFileSync } from 'node:fs';

const [file, messagesArg] = process.argv.slice(2);
const messages = Number(messagesArg);
if (!file || !(messages > 0)) throw new Error('usage: gc-summary.ts FILE MESSAGES');

interface Isolate {
  scavenges: number;
  scavengeMs: number;
  freedMb: number;
  markCompacts: number;
  markCompactMs: number;
  peakHeapMb: number;
}

// [pid:0xISOLATE]   1234 ms: Scavenge 4.4 (4.5) -> 3.7 (5.5) MB, 2.37 / 0.01 ms ...
const LINE = /^\[\d+:(0x[0-9a-f]+)\]\s+\d+ ms: (Scavenge|Mark-Compact)\b[^\d]*([\d.]+) \(([\d.]+)\) -> ([\d.]+) \([\d.]+\) MB, ([\d.]+) \//;
const isolates = new Map<string, Isolate>();
for (const line of readFileSync(file, 'utf8').split('\n')) {
  const m = LINE.exec(line);
  if (!m) continue;
  const [, id, kind, before, committed, after, ms] = m;
  let s = isolates.get(id);
  if (!s) isolates.set(id, (s = { scavenges: 0, scavengeMs: 0, freedMb: 0, markCompacts: 0, markCompactMs: 0, peakHeapMb: 0 }));
  s.peakHeapMb = Math.max(s.peakHeapMb, Number(committed));
  if (kind === 'Scavenge') {
    s.scavenges += 1;
    s.scavengeMs += Number(ms);
    s.freedMb += Number(before) - Number(after);
  } else {
    s.markCompacts += 1;
    s.markCompactMs += Number(ms);
  }
}

// The event loop's isolate is the first to collect: it starts before any worker.
for (const [i, [id, s]] of [...isolates].entries()) {
  const freedKb = ((s.freedMb * 1024) / messages).toFixed(0);
  console.log(
    `${id}${i === 0 ? ' (the event loop)' : ''}: ${s.scavenges} scavenges, ${(s.scavengeMs / 1000).toFixed(2)} s, ${freedKb} KB freed a message; ` +
      `${s.markCompacts} mark-compacts, ${(s.markCompactMs / 1000).toFixed(2)} s of pauses; heap up to ${s.peakHeapMb.toFixed(0)} MB`,
  );
}
