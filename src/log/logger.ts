import pino from 'pino';
import type { Logger } from '../core/ports.ts';
import { GatheredLines } from './gathered-lines.ts';

/** Logs go to stderr so `--json` output on stdout stays one clean document. */
export function createLogger(level: string): Logger & pino.Logger {
  // Written synchronously, as Node writes its own stderr to a pipe: a gathered write is one
  // system call on the event loop, not a thread pool job and two wake-ups, and at exit nothing
  // is left in flight.
  const lines = new GatheredLines(pino.destination({ dest: 2, sync: true }));
  return pino({ level, base: { service: 'mailsvc' }, timestamp: pino.stdTimeFunctions.isoTime }, lines);
}

/** Lets a logger of `createLogger` gather its lines while they come fast (`GatheredLines`); others are left as they are. */
export function gatherFromNowOn(log: Logger): void {
  const stream = (log as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  if (stream instanceof GatheredLines) stream.gatherFromNowOn();
}
