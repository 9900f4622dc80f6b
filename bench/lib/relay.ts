// The end-to-end benches (`relay`, `http-to-sink`): the same load through mailsvc, through a
// throwaway Postfix relaying to the same kind of sink, and through Postfix with OpenDKIM signing,
// one after another in each run; the sink must count exactly the messages sent.

import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startTestDns } from '../../test/helpers/dns-server.ts';
import { ensureBuilt, mailsvcSite, startMailsvc } from './mailsvc.ts';
import { startPostfix } from './postfix.ts';
import { cpuSeconds, fmt, peakRssMb, showSpread, spread } from './proc.ts';
import { authRelay, ensurePackages, smtpSink, smtpSource, type Sink } from './smtp.ts';

export interface RelayOptions {
  mode: 'smtp' | 'http';
  total: number;
  sessions: number;
  bytes: number;
  runs: number;
}

type Target = 'postfix' | 'postfix+opendkim' | 'mailsvc' | 'mailsvc+address';

interface Run {
  perSecond: number;
  seconds: number;
  received: number;
  /** Seconds until the last message was accepted (smtp-source or autocannon done). */
  acceptedSeconds: number;
  cpuSeconds?: number;
  /** Of cpuSeconds, what the event loop's thread used. */
  mainThreadCpuSeconds?: number;
  peakRssMb?: number;
}

/** Waits for the sink to count `total`, then a moment more to see that nothing more arrives. */
async function drained(sink: Sink, total: number): Promise<number> {
  const limit = 120_000 + total * 20;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([sink.reached(total), new Promise<void>((resolve) => (timer = setTimeout(resolve, limit)))]);
  clearTimeout(timer);
  return performance.now();
}

async function settle(sink: Sink): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 2000));
  return sink.count();
}

async function throughPostfix(opts: RelayOptions, dkim: boolean): Promise<Run> {
  const sink = await smtpSink();
  try {
    const postfix = await startPostfix({ relayTo: sink.port, dkimDomain: dkim ? 'bench.test' : undefined });
    try {
      const started = performance.now();
      await smtpSource(postfix.port, { total: opts.total, sessions: opts.sessions, bytes: opts.bytes, from: 'news@bench.test', to: 'user@dest.test' });
      const acceptedSeconds = (performance.now() - started) / 1000;
      const ended = await drained(sink, opts.total);
      const seconds = (ended - started) / 1000;
      return { perSecond: sink.count() >= opts.total ? opts.total / seconds : 0, seconds, acceptedSeconds, received: await settle(sink) };
    } finally {
      await postfix.stop();
    }
  } finally {
    await sink.stop();
  }
}

function httpBody(domain: string, bytes: number): string {
  const line = 'Your order has shipped and is on its way. Track it from your account page at any time.\n';
  return JSON.stringify({
    from: `News <news@${domain}>`,
    to: ['user@dest.test'],
    subject: 'Your order has shipped',
    text: line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes),
  });
}

/** `source`: one sending address every connection binds (delivery.sourceAddresses), for the same load with SPEC §12 on. */
async function throughMailsvc(opts: RelayOptions, source?: string): Promise<Run> {
  const sink = await smtpSink();
  const dns = await startTestDns();
  dns.set('dest.test', 'MX', { exchange: 'mx.dest.test', priority: 10 });
  dns.set('mx.dest.test', 'A', '127.0.0.1');
  const site = await mailsvcSite({
    dns: { servers: [dns.address], timeout: 2 },
    submission: { host: '127.0.0.1', port: 0, tlsPort: 0, maxConnectionsPerAddress: 1000 },
    delivery: { port: sink.port, ...(source ? { sourceAddresses: [{ address: source, ehlo: 'mta1.bench.test' }] } : {}) },
  });
  try {
    const ready = opts.mode === 'smtp' ? /SMTP submission listening on [\d.]+:(\d+)/ : /HTTP API listening on [\d.]+:(\d+)/;
    const server = await startMailsvc(site, opts.mode === 'smtp' ? 'submission,delivery' : 'api,delivery', ready);
    let run: Run;
    try {
      const port = Number(server.ready[1]);
      const cpuBefore = cpuSeconds(server.pid);
      const mainBefore = cpuSeconds(server.pid, server.pid);
      const started = performance.now();
      if (opts.mode === 'smtp') {
        const relay = await authRelay(port, site.apiKey);
        try {
          await smtpSource(relay.port, { total: opts.total, sessions: opts.sessions, bytes: opts.bytes, from: `news@${site.domain}`, to: 'user@dest.test' });
        } finally {
          await relay.close();
        }
      } else {
        const result = await autocannon({
          url: `http://127.0.0.1:${port}/api/v1/emails`,
          method: 'POST',
          connections: opts.sessions,
          amount: opts.total,
          headers: { authorization: `Bearer ${site.apiKey}`, 'content-type': 'application/json' },
          body: httpBody(site.domain, opts.bytes),
        });
        if (result['2xx'] !== opts.total) throw new Error(`${result['2xx']} of ${opts.total} requests answered 2xx (${result.non2xx} other, ${result.errors} errors)`);
      }
      const acceptedSeconds = (performance.now() - started) / 1000;
      const ended = await drained(sink, opts.total);
      const seconds = (ended - started) / 1000;
      const received = await settle(sink);
      run = {
        perSecond: sink.count() >= opts.total ? opts.total / seconds : 0,
        seconds,
        acceptedSeconds,
        received,
        cpuSeconds: cpuSeconds(server.pid) - cpuBefore,
        mainThreadCpuSeconds: cpuSeconds(server.pid, server.pid) - mainBefore,
        peakRssMb: peakRssMb(server.pid),
      };
    } finally {
      await server.stop();
    }
    // What mailsvc itself recorded: every recipient delivered once.
    const db = new Database(join(site.dir, 'mailsvc.sqlite'), { readonly: true, fileMustExist: true });
    try {
      const rows = db.prepare('SELECT status, count(*) AS n FROM recipients GROUP BY status').all() as { status: string; n: number }[];
      const delivered = rows.find((r) => r.status === 'delivered')?.n ?? 0;
      if (delivered !== opts.total) throw new Error(`mailsvc recorded ${JSON.stringify(rows)}, not ${opts.total} delivered`);
    } finally {
      db.close();
    }
    return run;
  } finally {
    site.cleanUp();
    await dns.close();
    await sink.stop();
  }
}

export async function relayBench(opts: RelayOptions): Promise<void> {
  ensurePackages([
    { probe: '/usr/sbin/postfix', packages: ['postfix'] },
    { probe: '/usr/sbin/smtp-source', packages: ['postfix'] },
    { probe: '/usr/sbin/opendkim', packages: ['opendkim'] },
    { probe: '/usr/sbin/opendkim-genkey', packages: ['opendkim-tools'] },
  ]);
  await ensureBuilt();
  const name = opts.mode === 'smtp' ? 'relay' : 'http-to-sink';
  const results: Record<Target, Run[]> = { postfix: [], 'postfix+opendkim': [], mailsvc: [], 'mailsvc+address': [] };
  // MAILSVC_BENCH_ONLY=mailsvc skips the references: for comparing two builds of mailsvc
  // (MAILSVC_BENCH_BUILD) run after run, not for the ratios.
  const only = process.env.MAILSVC_BENCH_ONLY;
  // MAILSVC_BENCH_ADDRESS=127.0.0.1 adds mailsvc with that one sending address, run for run
  // beside mailsvc without one.
  const address = process.env.MAILSVC_BENCH_ADDRESS;
  const targets = (['postfix', 'postfix+opendkim', 'mailsvc', ...(address ? ['mailsvc+address'] : [])] as Target[]).filter(
    (t) => !only || only.split(',').includes(t) || (t === 'mailsvc+address' && only.split(',').includes('mailsvc')),
  );
  for (let run = 1; run <= opts.runs; run++) {
    for (const target of targets) {
      const r =
        target === 'mailsvc'
          ? await throughMailsvc(opts)
          : target === 'mailsvc+address'
            ? await throughMailsvc(opts, address)
            : await throughPostfix(opts, target === 'postfix+opendkim');
      results[target].push(r);
      const extra =
        r.cpuSeconds !== undefined
          ? `  mailsvc CPU ${fmt(r.cpuSeconds, 1)} s (${fmt((r.cpuSeconds * 1000) / opts.total, 2)} ms/msg; main thread ${fmt(r.mainThreadCpuSeconds!, 1)} s, ${fmt((100 * r.mainThreadCpuSeconds!) / r.seconds)}% of the run), peak RSS ${r.peakRssMb} MB`
          : '';
      console.log(
        `run ${run} ${target.padEnd(16)} ${fmt(r.perSecond).padStart(6)} msgs/s  ${fmt(r.seconds, 1)} s (all accepted after ${fmt(r.acceptedSeconds, 1)} s)  sink ${r.received}/${opts.total}${extra}`,
      );
    }
  }
  const lost = Object.entries(results).flatMap(([t, rs]) => rs.filter((r) => r.received !== opts.total).map((r) => `${t}: ${r.received}`));
  const med = (t: Target) => spread(results[t].map((r) => r.perSecond)).median;
  const m = results.mailsvc;
  for (const t of targets) {
    console.log(`${t.padEnd(16)} msgs/s ${showSpread(results[t].map((r) => r.perSecond))} (min/median/max of ${opts.runs})`);
  }
  if (lost.length > 0) process.exitCode = 1;
  if (!targets.includes('postfix') || !targets.includes('postfix+opendkim')) return;
  console.log(
    `${name}: ${fmt(opts.total)} msgs of ${fmt(opts.bytes)} B, ${opts.sessions} ${opts.mode === 'smtp' ? 'sessions' : 'connections'}; ` +
      `mailsvc (DKIM on every message) ${fmt(med('mailsvc'))} msgs/s, postfix ${fmt(med('postfix'))}, postfix+opendkim ${fmt(med('postfix+opendkim'))}; ` +
      `mailsvc/postfix ${fmt(med('mailsvc') / med('postfix'), 2)}x, mailsvc/postfix+opendkim ${fmt(med('mailsvc') / med('postfix+opendkim'), 2)}x; ` +
      `mailsvc CPU ${showSpread(
        m.map((r) => r.cpuSeconds!),
        1,
      )} s, peak RSS ${showSpread(m.map((r) => r.peakRssMb!))} MB; ` +
      (lost.length === 0 ? 'sink count = sent count in every run' : `LOST OR DUPLICATED: ${lost.join(', ')}`),
  );
}
