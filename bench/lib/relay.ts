// The end-to-end benches (`relay`, `http-to-sink`): the same load through mailsvc (delivering
// through MX records, through `delivery.relayHost`, or both), through a throwaway Postfix relaying
// to the same kind of sink, and through Postfix with OpenDKIM signing, one after another in each
// run; the sink must count exactly the messages sent. Each step that shows no progress for 30 s
// (a reference that does not start, a source that is not accepted, a sink that stops counting)
// ends the bench with what it waited for, and everything started is stopped however it ends.

import Database from 'better-sqlite3';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startTestDns } from '../../test/helpers/dns-server.ts';
import { httpLoad, type Load } from './http-load.ts';
import { barLine, type RoundFigures } from './bar.ts';
import { loadNow, machineLine } from './machine.ts';
import { ensureBuilt, mailsvcSite, startMailsvc } from './mailsvc.ts';
import { PostfixFailure, startPostfix, type PostfixInstance } from './postfix.ts';
import { fmt, peakRssMb, selfAndReapedCpu, showSpread, spread } from './proc.ts';
import { interruptedBy, started, stopAll, stopAllOnSignals } from './running.ts';
import { authRelay, ensurePackages, smtpSink, startSmtpSource, type AuthRelay, type Sink } from './smtp.ts';
import { cpuByThread, sampleThreads, showThreadCpu, watchThreadWaits, type ThreadCpu } from './threads.ts';
import { StalledError, watched } from './watchdog.ts';

export type Via = 'mx' | 'relayhost' | 'both';

export interface RelayOptions {
  mode: 'smtp' | 'http';
  total: number;
  sessions: number;
  bytes: number;
  runs: number;
  /** How mailsvc reaches the sink: MX records on a loopback DNS server, `delivery.relayHost`, or both run for run. */
  via: Via;
  /**
   * Messages each target is sent first, unmeasured, through the same path (`MAILSVC_BENCH_WARMUP`;
   * 0: none): the measured window then starts warm, past the process's first seconds of JIT
   * compilation, and its figures are the steady state rather than a fresh process's.
   */
  warmup: number;
}

type Target = 'postfix' | 'postfix+opendkim' | 'mailsvc' | 'mailsvc+relayhost' | 'mailsvc+address';

interface Run {
  perSecond: number;
  seconds: number;
  received: number;
  /** Seconds until the last message was accepted (smtp-source or autocannon done). */
  acceptedSeconds: number;
  /** CPU seconds in the window, all threads of mailsvc or all processes of Postfix (and OpenDKIM). */
  cpuSeconds: number;
  /**
   * CPU seconds in the window of everything else on the machine that serves the load: smtp-sink,
   * smtp-source or autocannon with this bench process, and the pass-through when there is one. They share
   * the cores with what is measured, so on a busy machine they bear on its rate.
   */
  toolsCpuSeconds: number;
  /** mailsvc's, by thread. */
  threads?: ThreadCpu;
  peakRssMb?: number;
}

/** A step that shows no progress for this long ends the bench. */
const QUIET_MS = 30_000;
const POLL_MS = 250;

/** Calls `beat` whenever `read()` changes; returns how to stop looking. */
function onChange(read: () => number, beat: () => void): () => void {
  let last = read();
  const poll = setInterval(() => {
    const now = read();
    if (now !== last) {
      last = now;
      beat();
    }
  }, POLL_MS);
  // A step the watchdog abandoned never stops it: it must not hold the process.
  poll.unref();
  return () => clearInterval(poll);
}

/**
 * Sends `load` and waits for the sink to count every message; either step ends the bench once
 * 30 s pass without progress (the source accepting, the sink counting). `context` adds what
 * explains a stall (a maillog tail). Returns seconds until all was accepted and until all arrived.
 */
async function sendAndDrain(
  what: string,
  opts: RelayOptions,
  sink: Sink,
  load: () => Load,
  context: () => string,
  /** Messages the sink already counted (a warm-up's). */
  counted = 0,
): Promise<{ accepted: number; drained: number }> {
  const t0 = performance.now();
  const seconds = () => (performance.now() - t0) / 1000;
  const sent = load();
  const stopLoad = started(() => sent.stop());
  const tally = () => `accepted ${fmt(sent.accepted())}/${fmt(opts.total)}, sink ${fmt(sink.count() - counted)}/${fmt(opts.total)}`;
  await watched(
    () => `${what} to accept the load (${tally()})${context()}`,
    QUIET_MS,
    async (beat) => {
      const stopPolling = onChange(() => sent.accepted() + sink.count(), beat);
      try {
        await sent.done;
      } finally {
        stopPolling();
      }
    },
  );
  const accepted = seconds();
  await stopLoad();
  await watched(
    () => `${what} to deliver to the sink (${tally()})${context()}`,
    QUIET_MS,
    async (beat) => {
      const stopPolling = onChange(() => sink.count(), beat);
      try {
        await sink.reached(counted + opts.total);
      } finally {
        stopPolling();
      }
    },
  );
  return { accepted, drained: seconds() };
}

/**
 * The warm-up (`opts.warmup` messages through `load(count)`, drained at the sink), then the measured
 * load, with `measure` called right before the measured window opens and its value kept.
 */
async function warmThenSend<M>(
  target: Target,
  opts: RelayOptions,
  sink: Sink,
  load: (count: number) => Load,
  context: () => string,
  measure: () => M,
): Promise<{ accepted: number; drained: number; before: M }> {
  if (opts.warmup > 0) await sendAndDrain(`${target} (warm-up)`, { ...opts, total: opts.warmup }, sink, () => load(opts.warmup), context);
  const before = measure();
  const t = await sendAndDrain(target, opts, sink, () => load(opts.total), context, opts.warmup);
  return { ...t, before };
}

/** A moment more after the last message, to see that nothing more arrives. */
async function settle(sink: Sink, warmup: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 2000));
  return sink.count() - warmup;
}

async function newSink(): Promise<Sink> {
  const sink = await smtpSink();
  started(() => sink.stop());
  return sink;
}

async function throughPostfix(opts: RelayOptions, dkim: boolean): Promise<Run> {
  const target: Target = dkim ? 'postfix+opendkim' : 'postfix';
  const sink = await newSink();
  let postfix: PostfixInstance | undefined;
  const tail = () => (postfix ? `; postfix maillog tail:\n${postfix.maillogTail(10)}` : '');
  try {
    // startPostfix stops what it started when it fails, within 30 s (its port's deadline).
    postfix = await startPostfix({ relayTo: sink.port, dkimDomain: dkim ? 'bench.test' : undefined });
    const instance = postfix;
    const stopPostfix = started(() => instance.stop());
    // `relay` feeds Postfix directly, the reference of docs/PERFORMANCE.md. MAILSVC_BENCH_POSTFIX_HOP=1
    // puts the pass-through (without AUTH) in front of it, to see what the hop alone costs a
    // server (bench/NOTES.md), as MAILSVC_BENCH_AUTH=1 does in front of mailsvc.
    const passThrough = opts.mode === 'smtp' && process.env.MAILSVC_BENCH_POSTFIX_HOP === '1' ? await authRelay(instance.port) : undefined;
    if (passThrough) started(() => passThrough.close());
    const port = passThrough?.port ?? instance.port;
    const t = await warmThenSend(
      target,
      opts,
      sink,
      (total) => startSmtpSource(port, { total, sessions: opts.sessions, bytes: opts.bytes, from: 'news@bench.test', to: 'user@dest.test' }),
      tail,
      () => ({ cpu: instance.cpuSeconds(), tools: toolsCpu(sink, passThrough) }),
    );
    const cpuSeconds = postfix.cpuSeconds() - t.before.cpu;
    const toolsCpuSeconds = toolsCpu(sink, passThrough) - t.before.tools;
    const received = await settle(sink, opts.warmup);
    await stopPostfix();
    return { perSecond: opts.total / t.drained, seconds: t.drained, acceptedSeconds: t.accepted, received, cpuSeconds, toolsCpuSeconds };
  } finally {
    // This run's Postfix (when it failed) and sink: nothing else runs between runs.
    await stopAll();
  }
}

/**
 * `delivery`: through MX records on a loopback DNS server, or through `delivery.relayHost`
 * (no DNS at all). `source`: one sending address every connection binds (delivery.sourceAddresses),
 * for the same load with SPEC §12 on.
 */
async function throughMailsvc(opts: RelayOptions, target: Target, delivery: 'mx' | 'relayhost', source?: string): Promise<Run> {
  const sink = await newSink();
  try {
    let dnsServers: string[] = [];
    if (delivery === 'mx') {
      const dns = await startTestDns();
      started(() => dns.close());
      dns.set('dest.test', 'MX', { exchange: 'mx.dest.test', priority: 10 });
      dns.set('mx.dest.test', 'A', '127.0.0.1');
      dnsServers = [dns.address];
    }
    const sourceAddresses = source ? { sourceAddresses: [{ address: source, ehlo: 'mta1.bench.test' }] } : {};
    // smtp-source cannot AUTH. By default it feeds mailsvc as it feeds Postfix, straight in from
    // a trusted network (Postfix's mynetworks: loopback); MAILSVC_BENCH_AUTH=1 puts the AUTH
    // pass-through between them instead, so that every session authenticates with the key.
    const viaAuth = opts.mode === 'smtp' && process.env.MAILSVC_BENCH_AUTH === '1';
    const site = await mailsvcSite(
      {
        ...(delivery === 'mx' ? { dns: { servers: dnsServers, timeout: 2 } } : {}),
        submission: { host: '127.0.0.1', port: 0, tlsPort: 0, maxConnectionsPerAddress: 1000 },
        delivery: delivery === 'mx' ? { port: sink.port, ...sourceAddresses } : { relayHost: `127.0.0.1:${sink.port}`, ...sourceAddresses },
      },
      { trustedNetwork: opts.mode === 'smtp' && !viaAuth ? '127.0.0.1/32' : undefined },
    );
    started(async () => site.cleanUp());
    const ready = opts.mode === 'smtp' ? /SMTP submission listening on [\d.]+:(\d+)/ : /HTTP API listening on [\d.]+:(\d+)/;
    const server = await startMailsvc(site, opts.mode === 'smtp' ? 'submission,delivery' : 'api,delivery', ready, {}, QUIET_MS).catch((err: Error) => {
      throw new StalledError(`${target}: mailsvc serve to be ready: ${err.message.slice(-2000)}`);
    });
    const stopServer = started(() => server.stop());
    const port = Number(server.ready[1]);
    let load: (total: number) => Load;
    const passThrough = viaAuth ? await authRelay(port, site.apiKey) : undefined;
    if (passThrough) started(() => passThrough.close());
    if (opts.mode === 'smtp') {
      const into = passThrough?.port ?? port;
      load = (total) => startSmtpSource(into, { total, sessions: opts.sessions, bytes: opts.bytes, from: `news@${site.domain}`, to: 'user@dest.test' });
    } else {
      load = (total) => httpLoad(port, site.apiKey, site.domain, opts, total);
    }
    const t = await warmThenSend(
      target,
      opts,
      sink,
      load,
      () => `; mailsvc output tail:\n${server.output().trimEnd().split('\n').slice(-3).join('\n')}`,
      () => ({ threads: sampleThreads(server.pid), waits: watchThreadWaits(server.pid), tools: toolsCpu(sink, passThrough) }),
    );
    t.before.waits.stop();
    const threads = cpuByThread(t.before.threads, sampleThreads(server.pid), t.before.waits.seen);
    const toolsCpuSeconds = toolsCpu(sink, passThrough) - t.before.tools;
    const received = await settle(sink, opts.warmup);
    const peak = peakRssMb(server.pid);
    await stopServer();
    // What mailsvc itself recorded: every recipient delivered once.
    const db = new Database(join(site.dir, 'mailsvc.sqlite'), { readonly: true, fileMustExist: true });
    try {
      const rows = db.prepare('SELECT status, count(*) AS n FROM recipients GROUP BY status').all() as { status: string; n: number }[];
      const delivered = rows.find((r) => r.status === 'delivered')?.n ?? 0;
      if (delivered !== opts.warmup + opts.total) throw new Error(`${target}: mailsvc recorded ${JSON.stringify(rows)}, not ${opts.warmup + opts.total} delivered`);
    } finally {
      db.close();
    }
    return {
      perSecond: opts.total / t.drained,
      seconds: t.drained,
      acceptedSeconds: t.accepted,
      received,
      cpuSeconds: threads.total,
      toolsCpuSeconds,
      threads,
      peakRssMb: peak,
    };
  } finally {
    // This run's sink, DNS server, site and auth relay: nothing else runs between runs.
    await stopAll();
  }
}

/** How smtp-source reaches each server (MAILSVC_BENCH_AUTH, MAILSVC_BENCH_POSTFIX_HOP), for the bench's first lines. */
const feeds = (): string =>
  `mailsvc ${process.env.MAILSVC_BENCH_AUTH === '1' ? 'through the AUTH pass-through' : 'directly, from a trusted network'}, ` +
  `Postfix ${process.env.MAILSVC_BENCH_POSTFIX_HOP === '1' ? 'through the pass-through' : 'directly'}`;

/** The load tools' CPU so far: this process (autocannon, the polling), smtp-source once it has exited, the sink, the pass-through. */
const toolsCpu = (sink: Sink, passThrough?: AuthRelay): number => selfAndReapedCpu() + sink.cpuSeconds() + (passThrough?.cpuSeconds() ?? 0);

const msPerMessage = (cpuSeconds: number, total: number) => fmt((cpuSeconds * 1000) / total, 2);
const figures = (r: Run): RoundFigures => ({ perSecond: r.perSecond, cpuMsPerMessage: (r.cpuSeconds * 1000) / r.received });

function runLine(run: number, target: Target, r: Run, opts: RelayOptions): string {
  const whose = target.startsWith('mailsvc') ? 'mailsvc' : target === 'postfix' ? 'Postfix' : 'Postfix+OpenDKIM';
  const cpu = `${whose} CPU ${fmt(r.cpuSeconds, 1)} s = ${msPerMessage(r.cpuSeconds, opts.total)} ms/msg`;
  const threads = r.threads ? `; cpu by thread: ${showThreadCpu(r.threads)}; peak RSS ${r.peakRssMb} MB` : '';
  const tools = `; load tools CPU ${fmt(r.toolsCpuSeconds, 1)} s = ${msPerMessage(r.toolsCpuSeconds, opts.total)} ms/msg`;
  return `run ${run} ${target.padEnd(17)} ${fmt(r.perSecond).padStart(6)} msgs/s  ${fmt(r.seconds, 1)} s (all accepted after ${fmt(r.acceptedSeconds, 1)} s)  sink ${r.received}/${opts.total}  ${cpu}${threads}${tools}`;
}

/** The run with the median msgs/s (the lower of the two middle ones for an even count). */
const medianRun = (runs: Run[]): Run => [...runs].sort((a, b) => a.perSecond - b.perSecond)[(runs.length - 1) >> 1];

export async function relayBench(given: Omit<RelayOptions, 'warmup'>): Promise<void> {
  const name = given.mode === 'smtp' ? 'relay' : 'http-to-sink';
  const warmup = Number(process.env.MAILSVC_BENCH_WARMUP ?? 0);
  if (!Number.isInteger(warmup) || warmup < 0) throw new Error(`MAILSVC_BENCH_WARMUP must be a whole number of messages, not ${process.env.MAILSVC_BENCH_WARMUP}`);
  const opts: RelayOptions = { ...given, warmup };
  stopAllOnSignals();
  try {
    await bench(name, opts);
  } catch (err) {
    const known = err instanceof StalledError || err instanceof PostfixFailure;
    if (!interruptedBy()) console.error(`${name}: ${known ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  } finally {
    await stopAll();
  }
  // A step the watchdog abandoned may leave a socket or timer behind; what it needed is stopped.
  if (process.exitCode) process.exit();
}

async function bench(name: string, opts: RelayOptions): Promise<void> {
  console.log(machineLine());
  ensurePackages([
    { probe: '/usr/sbin/postfix', packages: ['postfix'] },
    { probe: '/usr/sbin/smtp-source', packages: ['postfix'] },
    { probe: '/usr/sbin/opendkim', packages: ['opendkim'] },
    { probe: '/usr/sbin/opendkim-genkey', packages: ['opendkim-tools'] },
  ]);
  await ensureBuilt();
  const results: Record<Target, Run[]> = { postfix: [], 'postfix+opendkim': [], mailsvc: [], 'mailsvc+relayhost': [], 'mailsvc+address': [] };
  // MAILSVC_BENCH_ONLY=mailsvc skips the references: for comparing two builds of mailsvc
  // (MAILSVC_BENCH_BUILD) run after run, not for the ratios.
  const only = process.env.MAILSVC_BENCH_ONLY?.split(',');
  // MAILSVC_BENCH_ADDRESS=127.0.0.1 adds mailsvc with that one sending address, run for run
  // beside mailsvc without one.
  const address = process.env.MAILSVC_BENCH_ADDRESS;
  const all: Target[] = [
    'postfix',
    'postfix+opendkim',
    ...(opts.via !== 'relayhost' ? ['mailsvc' as const] : []),
    ...(opts.via !== 'mx' ? ['mailsvc+relayhost' as const] : []),
    ...(address ? ['mailsvc+address' as const] : []),
  ];
  const targets = all.filter((t) => !only || only.includes(t) || (t.startsWith('mailsvc') && only.includes('mailsvc')));
  console.log(
    `${name}: ${fmt(opts.total)} msgs of ${fmt(opts.bytes)} B, ${opts.sessions} ${opts.mode === 'smtp' ? 'sessions' : 'connections'}, ${opts.runs} runs of ${targets.join(', ')}` +
      (opts.warmup > 0 ? `, each after a warm-up of ${fmt(opts.warmup)} msgs through the same path, not measured` : '') +
      (opts.mode === 'smtp' ? `; smtp-source feeds ${feeds()}` : ''),
  );
  for (let run = 1; run <= opts.runs; run++) {
    for (const target of targets) {
      const r =
        target === 'mailsvc'
          ? await throughMailsvc(opts, target, 'mx')
          : target === 'mailsvc+relayhost'
            ? await throughMailsvc(opts, target, 'relayhost')
            : target === 'mailsvc+address'
              ? await throughMailsvc(opts, target, 'mx', address)
              : await throughPostfix(opts, target === 'postfix+opendkim');
      results[target].push(r);
      console.log(runLine(run, target, r, opts));
    }
  }
  const lost = Object.entries(results).flatMap(([t, rs]) => rs.filter((r) => r.received !== opts.total).map((r) => `${t}: ${r.received}`));
  const med = (t: Target) => spread(results[t].map((r) => r.perSecond)).median;
  const reference = targets.includes('postfix') ? med('postfix') : undefined;
  for (const t of targets) {
    const rs = results[t];
    const ratio = reference ? ` (${fmt(med(t) / reference, 2)}x postfix)` : '';
    const cpu = `CPU ${msPerMessage(spread(rs.map((r) => r.cpuSeconds)).median, opts.total)} ms/msg`;
    const m = medianRun(rs);
    const mailsvc = m.threads ? `, peak RSS ${Math.max(...rs.map((r) => r.peakRssMb ?? 0))} MB; median run by thread: ${showThreadCpu(m.threads)}` : '';
    console.log(`${t.padEnd(17)} msgs/s ${showSpread(rs.map((r) => r.perSecond))} (min/median/max of ${opts.runs})${ratio}, ${cpu}${mailsvc}`);
    if (reference && t.startsWith('mailsvc')) console.log(`${' '.repeat(17)} ${barLine(rs.map(figures), results.postfix.map(figures))}`);
  }
  if (lost.length > 0) process.exitCode = 1;
  if (!targets.includes('postfix') || !targets.includes('postfix+opendkim')) return;
  const ms = (t: Target) => msPerMessage(spread(results[t].map((r) => r.cpuSeconds)).median, opts.total);
  const mailsvcs = targets.filter((t) => t.startsWith('mailsvc'));
  console.log(
    `${name}: ${fmt(opts.total)} msgs of ${fmt(opts.bytes)} B, ${opts.sessions} ${opts.mode === 'smtp' ? 'sessions' : 'connections'}; ` +
      mailsvcs.map((t) => `${t} (DKIM on every message) ${fmt(med(t))} msgs/s, ${ms(t)} ms CPU/msg, ${fmt(med(t) / med('postfix'), 2)}x postfix; `).join('') +
      `postfix ${fmt(med('postfix'))} msgs/s, ${ms('postfix')} ms CPU/msg; postfix+opendkim ${fmt(med('postfix+opendkim'))}, ${ms('postfix+opendkim')} ms CPU/msg; ` +
      (lost.length === 0 ? 'sink count = sent count in every run' : `LOST OR DUPLICATED: ${lost.join(', ')}`) +
      `; load at the end ${loadNow()}`,
  );
}
