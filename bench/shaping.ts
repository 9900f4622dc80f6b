/**
 * Delivery under the receivers' limits (SPEC §11): messages to 200 domains that roll up to 4
 * providers (150 domains) plus 50 independent hosts, every sink on the loopback provider farm
 * enforcing a known rate over any sliding minute and a number of connections, with a 421 beyond
 * them. mailsvc knows the same limits (`shaping.providers` with each provider's MX suffix, and
 * `shaping.defaults.perMinute` for the hosts). The messages are accepted first through the HTTP
 * API of a `mailsvc serve --roles api` child (not timed), then a `serve --roles api,delivery`
 * child delivers them, timed from the first message at the farm to the last. The reference is
 * the sum of the limits, the most any sender may deliver under them.
 *
 * Then, in the same run, the same farm limits against mailsvc without them (nothing configured:
 * each domain is the group of its first MX host, 10 connections, no rate), on a fresh database
 * and a fresh farm, for a fixed time: how many throttling replies it provokes, and how much it
 * delivered meanwhile. That worker is stopped at the end of its time, with groups throttled or
 * suspended by the receivers' replies.
 *
 *   npm run bench -- shaping [messages=20000] [unshaped_seconds=30]    # unshaped_seconds=0: the shaped run alone
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { pacingInterval } from '../src/shaping/pacing.ts';
import { ensureBuilt, mailsvcSite, startMailsvc, type MailsvcSite } from './lib/mailsvc.ts';
import { loadNow, machineName } from './lib/machine.ts';
import { cpuSeconds, fmt, peakRssMb, spread, type Child } from './lib/proc.ts';
import { started, stopAll } from './lib/running.ts';
import { counts, destinations, measure, missing, refusals, table } from './lib/shaping-measure.ts';
import { HOST_CONNECTIONS, HOST_PER_MINUTE, HOSTS, LIMITS_PER_MINUTE, PROVIDERS, recipients, shapingConfig, startFarm, type Farm } from './lib/shaping-world.ts';
import { StalledError, watched } from './lib/watchdog.ts';

const total = Number(process.argv[2] ?? 20_000);
const unshapedSeconds = Number(process.argv[3] ?? 30);
/** A step that shows no progress for this long ends the bench. */
const QUIET_MS = 30_000;
/** POST /emails in flight while the queue is loaded. */
const POSTING = 50;
const FROM = 'news@bench.test';
const TEXT = 'Your order has shipped and is on its way. Track it from your account page at any time.\n'.repeat(20);
const READY = /HTTP API listening on [\d.]+:(\d+)[\s\S]*"phase":"ready"/;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Server {
  child: Child;
  base: string;
  /** Stops it (SIGTERM, SIGKILL after 10 s); `clean` when it exited 0 by itself. */
  stop(): Promise<{ seconds: number; clean: boolean }>;
}

async function serve(site: MailsvcSite, roles: string): Promise<Server> {
  // A child not ready in time is killed by startMailsvc itself.
  const child = await startMailsvc(site, roles, READY, {}, QUIET_MS).catch((err: Error) => {
    throw new StalledError(`mailsvc serve --roles ${roles} to be ready: ${err.message.slice(-2000)}`);
  });
  const stop = started(() => child.stop());
  return {
    child,
    base: `http://127.0.0.1:${Number(child.ready[1])}`,
    stop: async () => {
      const t = Date.now();
      await stop();
      return { seconds: (Date.now() - t) / 1000, clean: child.child.exitCode === 0 };
    },
  };
}

async function newFarm(): Promise<Farm> {
  const farm = await watched(
    () => 'the provider farm to listen',
    QUIET_MS,
    () => startFarm(),
  );
  started(() => farm.close());
  return farm;
}

async function newSite(farm: Farm, shaped: boolean): Promise<MailsvcSite> {
  const site = await mailsvcSite({
    dns: { servers: [farm.dns.address], timeout: 2 },
    // Shaped, a refusal that no rule knows (a breach, counted as one) is retried after 5 s rather
    // than the default minute, so that the run ends and reports it instead of stalling.
    delivery: { port: farm.farm.port, ...(shaped ? { retrySchedule: [5] } : {}) },
    shaping: shapingConfig(shaped),
  });
  started(async () => site.cleanUp());
  return site;
}

/** Accepts one message to each address through POST /api/v1/emails of an api-only child, `POSTING` at a time. */
async function loadQueue(site: MailsvcSite, to: string[]): Promise<void> {
  const server = await serve(site, 'api');
  let next = 0;
  let done = 0;
  await watched(
    () => `answers to POST /api/v1/emails (${fmt(done)} of ${fmt(to.length)} accepted)`,
    QUIET_MS,
    (beat) =>
      Promise.all(
        Array.from({ length: POSTING }, async () => {
          while (next < to.length) {
            const n = next++;
            const res = await fetch(`${server.base}/api/v1/emails`, {
              method: 'POST',
              headers: { authorization: `Bearer ${site.apiKey}`, 'content-type': 'application/json' },
              body: JSON.stringify({ from: `News <${FROM}>`, to: to[n], subject: `Your order ${n} has shipped`, text: TEXT }),
            });
            const body = await res.text();
            if (res.status !== 201) throw new Error(`POST /api/v1/emails to ${to[n]}: ${res.status} ${body}`);
            done++;
            beat();
          }
        }),
      ),
  );
  await server.stop();
}

/** Waits until `done()`, calling `beat` whenever `progress()` moves. */
async function until(done: () => boolean, progress: () => number, beat: () => void): Promise<void> {
  let seen = progress();
  while (!done()) {
    await sleep(100);
    const now = progress();
    if (now !== seen) beat();
    seen = now;
  }
}

/** A counter or gauge of /metrics summed by one of its labels. */
async function metric(base: string, name: string, label: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^(\w+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const key = new RegExp(`${label}="([^"]*)"`).exec(m[2] ?? '')?.[1] ?? '';
    out[key] = (out[key] ?? 0) + Number(m[3]);
  }
  return out;
}

/** What mailsvc itself recorded, read from its database once it has stopped. */
function recorded(site: MailsvcSite): { statuses: Record<string, number>; maxAttempts: number } {
  const db = new Database(join(site.dir, 'mailsvc.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT status, count(*) AS n, max(attempts) AS a FROM recipients GROUP BY status').all() as { status: string; n: number; a: number }[];
    return { statuses: Object.fromEntries(rows.map((r) => [r.status, r.n])), maxAttempts: Math.max(0, ...rows.map((r) => r.a)) };
  } finally {
    db.close();
  }
}

/** Every message with every limit known to mailsvc, timed from the first at the farm to the last. */
async function shapedRun(to: string[]) {
  const farm = await newFarm();
  const site = await newSite(farm, true);
  await loadQueue(site, to);
  const server = await serve(site, 'api,delivery');
  const cpuBefore = cpuSeconds(server.child.pid);
  const f = farm.farm;
  await watched(
    () => `${fmt(to.length)} messages at the farm (have ${fmt(f.totalAccepted())}; ${missing(farm, to)})`,
    QUIET_MS,
    (beat) =>
      until(
        () => f.totalAccepted() >= to.length,
        () => f.totalAccepted(),
        beat,
      ),
  );
  const cpu = cpuSeconds(server.child.pid) - cpuBefore;
  const peakRss = peakRssMb(server.child.pid);
  const deferred = await metric(server.base, 'mailsvc_shaping_deferred_total', 'reason');
  const replies = await metric(server.base, 'mailsvc_shaping_replies_total', 'action');
  const stopped = await server.stop();
  const { providers, hosts } = destinations(farm);
  return {
    all: measure([...providers, ...hosts]),
    providers: providers.map((d) => ({ d, m: measure([d]) })),
    hosts: measure(hosts),
    hostSpans: spread(hosts.map((d) => measure([d]).seconds)),
    duplicates: f.duplicates().length,
    cpuMsPerMessage: (cpu * 1000) / to.length,
    peakRss,
    deferred,
    replies,
    stopped,
    db: recorded(site),
  };
}

/** The same messages and farm limits, nothing configured in mailsvc, for `unshapedSeconds`. */
async function unshapedRun(to: string[]) {
  const farm = await newFarm();
  const site = await newSite(farm, false);
  await loadQueue(site, to);
  const server = await serve(site, 'api,delivery');
  const f = farm.farm;
  const events = () => f.providers().reduce((n, p) => n + p.accepted.length + p.refused.length, 0);
  const deadline = Date.now() + unshapedSeconds * 1000;
  await watched(
    () => `any answer from the farm in the unshaped run (${fmt(f.totalAccepted())} accepted so far)`,
    QUIET_MS,
    (beat) => until(() => Date.now() >= deadline || f.totalAccepted() >= to.length, events, beat),
  );
  const replies = await metric(server.base, 'mailsvc_shaping_replies_total', 'action');
  const throttled = await metric(server.base, 'mailsvc_shaping_group_throttled_until_seconds', 'group');
  const suspended = await metric(server.base, 'mailsvc_shaping_group_suspended_until_seconds', 'group');
  const { providers, hosts } = destinations(farm);
  const atDeadline = { all: measure([...providers, ...hosts]), providers: providers.map((d) => ({ d, m: measure([d]) })), hosts: measure(hosts) };
  const stopped = await server.stop();
  return {
    ...atDeadline,
    afterStop: f.totalAccepted(),
    duplicates: f.duplicates().length,
    replies,
    throttledGroups: Object.keys(throttled).length,
    suspendedGroups: Object.keys(suspended).length,
    stopped,
    db: recorded(site),
  };
}

/** What pacing lets a group send a minute: slots a whole number of milliseconds apart, spread over 61 s (src/shaping/pacing.ts). */
const pacedPerMinute = (perMinute: number) => 60_000 / pacingInterval(perMinute, false);

type Shaped = Awaited<ReturnType<typeof shapedRun>>;
type Unshaped = Awaited<ReturnType<typeof unshapedRun>>;

function printShaped(shaped: Shaped, rate: number): void {
  const s = shaped.all;
  const h = shaped.hosts;
  console.log(`\nshaped: the limits known to mailsvc`);
  console.log(
    table([
      ['sinks', 'limit/min', 'conns', 'delivered', 'span s', 'msgs/s', 'limit/s', 'opened', 'peak conns', 'max in 60 s', 'refused', 'breaches'],
      ...shaped.providers.map(({ d, m }) => [
        d.stats.name,
        fmt(d.perMinute),
        d.connections,
        fmt(m.delivered),
        fmt(m.seconds, 1),
        fmt(m.delivered / m.seconds, 1),
        fmt(d.perMinute / 60, 1),
        fmt(m.opened),
        m.peakConnections,
        fmt(m.maxPerMinute),
        refusals(m),
        m.breaches,
      ]),
      [
        `${HOSTS} hosts`,
        `${HOST_PER_MINUTE} each`,
        `${HOST_CONNECTIONS} each`,
        fmt(h.delivered),
        `${fmt(shaped.hostSpans.min, 1)}–${fmt(shaped.hostSpans.max, 1)}`,
        fmt(h.delivered / h.seconds, 1),
        fmt((HOSTS * HOST_PER_MINUTE) / 60, 1),
        fmt(h.opened),
        h.peakConnections,
        fmt(h.maxPerMinute),
        refusals(h),
        h.breaches,
      ],
      [
        'all',
        fmt(LIMITS_PER_MINUTE),
        '',
        fmt(s.delivered),
        fmt(s.seconds, 1),
        fmt(rate, 1),
        fmt(LIMITS_PER_MINUTE / 60, 1),
        fmt(s.opened),
        '',
        '',
        refusals(s),
        s.breaches,
      ],
    ]),
  );
  console.log(
    `mailsvc recorded ${counts(shaped.db.statuses)} (most attempts ${shaped.db.maxAttempts}); put back by shaping: ${counts(shaped.deferred)}; replies matching a rule: ${counts(shaped.replies)}; ` +
      `CPU ${fmt(shaped.cpuMsPerMessage, 2)} ms per message (all threads), peak RSS ${shaped.peakRss} MB; stopped in ${fmt(shaped.stopped.seconds, 2)} s`,
  );
}

function printUnshaped(unshaped: Unshaped): void {
  const rows = [...unshaped.providers.map(({ d, m }) => [d.stats.name, m] as const), [`${HOSTS} hosts`, unshaped.hosts] as const, ['all', unshaped.all] as const];
  console.log(`\nunshaped: nothing configured, stopped after ${unshapedSeconds} s`);
  console.log(
    table([
      ['sinks', 'delivered', 'refused: rate', 'connections', 'other', 'opened', 'peak conns', 'max in 60 s'],
      ...rows.map(([name, m]) => [
        name,
        fmt(m.delivered),
        fmt(m.refused.rate),
        fmt(m.refused.connections),
        fmt(m.refused.other),
        fmt(m.opened),
        m.peakConnections,
        fmt(m.maxPerMinute),
      ]),
    ]),
  );
  console.log(
    `mailsvc: replies matching a rule ${counts(unshaped.replies)}; at the end ${unshaped.throttledGroups} groups throttled, ${unshaped.suspendedGroups} suspended; ` +
      `stopped ${unshaped.stopped.clean ? 'cleanly' : 'NOT cleanly'} in ${fmt(unshaped.stopped.seconds, 2)} s, recorded ${counts(unshaped.db.statuses)}; ` +
      `at the farm after the stop ${fmt(unshaped.afterStop)}, ${unshaped.duplicates} duplicates`,
  );
}

async function main(): Promise<void> {
  const machine = machineName();
  const loadBefore = loadNow();
  await ensureBuilt();
  const to = recipients(total);
  const limitPerSecond = LIMITS_PER_MINUTE / 60;
  const pacedPerSecond = (PROVIDERS.reduce((sum, p) => sum + pacedPerMinute(p.perMinute), 0) + HOSTS * pacedPerMinute(HOST_PER_MINUTE)) / 60;
  console.log(
    `${machine}, load ${loadBefore}; ${fmt(total)} messages to 200 domains; sum of the limits ${fmt(LIMITS_PER_MINUTE)}/min = ${fmt(limitPerSecond, 1)} msgs/s ` +
      `(pacing's slots, a minute's worth over 61 s, allow ${fmt(pacedPerSecond, 1)})`,
  );

  const shaped = await shapedRun(to);
  const rate = shaped.all.seconds > 0 ? shaped.all.delivered / shaped.all.seconds : 0;
  printShaped(shaped, rate);
  // unshaped_seconds=0 leaves the unshaped run out (to look at the shaped one alone).
  const unshaped = unshapedSeconds > 0 ? await unshapedRun(to) : null;
  if (unshaped) printUnshaped(unshaped);

  const s = shaped.all;
  const u = unshaped?.all;
  const failures = [
    s.breaches > 0 && `${s.breaches} breaches`,
    shaped.duplicates + (unshaped?.duplicates ?? 0) > 0 && 'duplicates',
    shaped.db.statuses.delivered !== total && 'not all delivered',
    unshaped && !unshaped.stopped.clean && 'the unshaped worker did not stop cleanly',
  ].filter(Boolean);
  console.log(
    `\nshaping: ${fmt(total)} msgs to 200 domains (4 providers, ${HOSTS} hosts); shaped ${fmt(rate, 1)} msgs/s against the sum of the limits ${fmt(limitPerSecond, 1)}: ` +
      `${fmt(rate / limitPerSecond, 3)}x (target 0.9x), ${s.breaches} breaches, ${shaped.duplicates} duplicates, ${fmt(shaped.cpuMsPerMessage, 2)} ms CPU/msg; ` +
      (u
        ? `unshaped for ${unshapedSeconds} s: ${fmt(u.delivered)} delivered, ${fmt(refusals(u))} refusals (${fmt(u.refused.rate)} rate, ${fmt(u.refused.connections)} connections); `
        : 'no unshaped run; ') +
      `${machine}, load ${loadBefore} → ${loadNow()}${failures.length > 0 ? `; FAILED: ${failures.join(', ')}` : ''}`,
  );
  if (failures.length > 0) process.exitCode = 1;
}

try {
  await main();
} catch (err) {
  console.error(err instanceof StalledError ? `shaping bench: ${err.message}` : err);
  process.exitCode = 1;
} finally {
  await stopAll();
}
// A step the watchdog abandoned may leave a socket or timer behind; what it needed is stopped.
if (process.exitCode) process.exit();
