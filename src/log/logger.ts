import pino from 'pino';
import type { Logger } from '../core/ports.ts';

/** Logs go to stderr so `--json` output on stdout stays one clean document. */
export function createLogger(level: string): Logger & pino.Logger {
  return pino({ level, base: { service: 'mailsvc' }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination(2));
}
