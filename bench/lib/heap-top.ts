/**
 * Where the event loop's allocations come from, per message: a heap profile written by
 * `heap-sample.mjs` (MAILSVC_BENCH_HEAP=DIR on a bench), every byte allocated over the process's
 * life counted whether it was freed or not. Bytes by function (self), by package or file, and
 * through our own functions (inclusive), each divided by the messages the run sent.
 *
 *   node --import tsx bench/lib/heap-top.ts FILE.heapprofile MESSAGES [rows=25]
 */
import { readFileSync } from 'node:fs';
import { frameLabel, where, type CallFrame } from './frames.ts';

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

const [file, messagesArg, rowsArg] = process.argv.slice(2);
const messages = Number(messagesArg);
if (!file || !(messages > 0)) throw new Error('usage: heap-top.ts FILE.heapprofile MESSAGES [rows]');
const rows = Number(rowsArg ?? 25);
const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode };

const self = new Map<string, number>();
const byWhere = new Map<string, number>();
const inclusive = new Map<string, number>();
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
let total = 0;

// Iterative: a deep stack of nodes would overflow recursion. `ours` holds each of our frames on the path once.
const stack: { node: HeapNode; ours: string[] }[] = [{ node: head, ours: [] }];
while (stack.length > 0) {
  const { node, ours } = stack.pop()!;
  const label = frameLabel(node.callFrame);
  const mine = /\/(src|dist)\//.test(node.callFrame.url) && !ours.includes(label) ? [...ours, label] : ours;
  total += node.selfSize;
  add(self, label, node.selfSize);
  add(byWhere, where(node.callFrame.url), node.selfSize);
  for (const k of mine) add(inclusive, k, node.selfSize);
  for (const child of node.children) stack.push({ node: child, ours: mine });
}

const perMessage = (bytes: number) => `${(bytes / messages / 1024).toFixed(2).padStart(7)} KB`;
const top = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, rows);
console.log(`${(total / 2 ** 20).toFixed(0)} MB allocated, ${perMessage(total).trim()} a message over ${messages} messages`);
console.log('\nallocated by package/file, a message:');
for (const [k, v] of top(byWhere)) console.log(`${perMessage(v)}  ${k}`);
console.log('\nallocated by function (self), a message:');
for (const [k, v] of top(self)) console.log(`${perMessage(v)}  ${k}`);
console.log('\nallocated through our functions (inclusive), a message:');
for (const [k, v] of top(inclusive)) console.log(`${perMessage(v)}  ${k}`);
