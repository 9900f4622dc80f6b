/**
 * End to end over SMTP: smtp-source -> mailsvc submission -> delivery through MX records on a
 * loopback DNS server -> smtp-sink, DKIM-signing every message; in the same run the same load
 * through a throwaway Postfix relaying to a sink, and through Postfix with Debian's OpenDKIM
 * milter signing. Delivered messages per second, from the first connection to the last message
 * at the sink; the sink must count exactly the messages sent. Installs postfix, opendkim and
 * opendkim-tools when missing (apt-get).
 *
 * Each run prints msgs/s, the CPU per message of what was measured over the same window (mailsvc:
 * all threads of its process, split by thread from /proc/PID/task into main, workers (the
 * signing threads, `workers(sign)`, and the SMTP session thread, `workers(submission)`, by the
 * names they give themselves), V8 platform (garbage collection, compilation), libuv and exited
 * threads;
 * Postfix: the master and all its children, with OpenDKIM for postfix+opendkim; not the load
 * tool nor the sink), mailsvc's peak RSS, and the load tools' CPU over the same window (smtp-source,
 * smtp-sink, the pass-through when there is one and this bench process: they share the cores with what
 * is measured, so on a busy machine they bear on its rate). The summary gives per target the median msgs/s, its
 * ratio to Postfix, the median CPU ms/msg, the peak RSS and the thread split of the median run,
 * and for mailsvc how many runs met the bar of docs/PERFORMANCE.md, each against Postfix's run of
 * the same round (`bench/lib/bar.ts`).
 * The first line names the machine (CPU, cores, Node, load average, date), the second the load
 * and how smtp-source feeds each server. A step without
 * progress for 30 s (a reference not starting, the load not accepted, the sink not counting)
 * ends the bench with what it waited for and the last lines of Postfix's maillog; everything
 * started is stopped then and on SIGINT/SIGTERM.
 *
 * via: how mailsvc reaches the sink: `mx` (MX records on a loopback DNS server), `relayhost`
 * (`delivery.relayHost`, no DNS at all), or `both` (targets mailsvc and mailsvc+relayhost, run
 * for run). Postfix always relays to its relayhost.
 *
 * MAILSVC_BENCH_WARMUP=N sends every target N messages first through the same path, not measured:
 * the figures are then those of a warm process (mailsvc past its JIT compilation, Postfix with
 * its processes started), not of a fresh one.
 *
 * smtp-source cannot AUTH. It feeds both servers directly: Postfix takes loopback as its
 * `mynetworks`, mailsvc as a trusted network submitting as the bench workspace's key
 * (`submission.trustedNetworks`). MAILSVC_BENCH_AUTH=1 feeds mailsvc through a pass-through that
 * authenticates each session with the key instead (`lib/auth-relay.c`), and
 * MAILSVC_BENCH_POSTFIX_HOP=1 puts the same pass-through (without AUTH) in front of Postfix: the
 * two show what the extra hop costs a server's rate.
 *
 * To look inside mailsvc's process (each described where it is read): MAILSVC_BENCH_PROFILE=DIR
 * (CPU profiles, `lib/profile-top.ts`), MAILSVC_BENCH_HEAP=DIR (every byte the event loop
 * allocates, `lib/heap-top.ts`), MAILSVC_BENCH_NODE_ARGS (V8 flags such as `--trace-gc`) with
 * MAILSVC_BENCH_CHILD_LOG=FILE (all the child writes, `lib/gc-summary.ts`).
 *
 *   npm run bench -- relay [messages=20000] [sessions=20] [bytes=5120] [runs=3] [via=mx|relayhost|both]
 */
import { relayBench, type Via } from './lib/relay.ts';

const [total, sessions, bytes, runs] = process.argv.slice(2, 6).map(Number);
const via = (process.argv[6] ?? 'mx') as Via;
if (!['mx', 'relayhost', 'both'].includes(via)) throw new Error(`via must be mx, relayhost or both, not ${via}`);
await relayBench({ mode: 'smtp', total: total || 20_000, sessions: sessions || 20, bytes: bytes || 5120, runs: runs || 3, via });
