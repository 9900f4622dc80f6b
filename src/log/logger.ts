import pino from 'pino';
import type { Logger } from '../core/ports.ts';
import { GatheredLines } from './gathered-lines.ts';

const gathered = new WeakMap<Logger, GatheredLines>();

/** Every logger's gathered lines, written when the process exits (one hook, however many loggers). */
const live = new Set<WeakRef<GatheredLines>>();
process.once('exit', () => {
  for (const lines of live) lines.deref()?.flush();
});

/** Logs go to stderr so `--json` output on stdout stays one clean document. */
export function createLogger(level: string): Logger & pino.Logger {
  // Written synchronously, as Node writes its own stderr to a pipe: a gathered write is one
  // system call on the event loop, not a thread pool job and two wake-ups, and at exit nothing
  // is left in flight.
  const lines = new GatheredLines(pino.destination({ dest: 2, sync: true }));
  live.add(new WeakRef(lines));
  const log = pino({ level, base: { service: 'mailsvc' }, timestamp: pino.stdTimeFunctions.isoTime }, lines);
  gathered.set(log, lines);
  return log;
}

/** Lets a logger of `createLogger` gather its lines while they come fast (`GatheredLines`); others are left as they are. */
export function gatherFromNowOn(log: Logger): void {
  gathered.get(log)?.gatherFromNowOn();
}
