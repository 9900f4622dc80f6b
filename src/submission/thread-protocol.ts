import type { Reply } from '../core/smtp-reply.ts';
import type { SubmissionDesk } from './desk.ts';
import type { SubmissionOptions } from './sessions.ts';

/** The session thread's name (15 bytes: what Linux keeps of a thread's name). */
export const SESSION_THREAD_NAME = 'mailsvc-smtp-in';

/** What the session thread starts with. */
export interface SessionThreadData {
  options: SubmissionOptions;
  hostname: string;
}

export type DeskQuestion = keyof SubmissionDesk;
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** From the session thread to the event loop that holds the desk. */
export type FromSessions =
  | { t: 'ready'; ports: { submission: number; submissions: number } }
  | { t: 'failed'; error: string }
  | { t: 'ask'; id: number; question: DeskQuestion; args: unknown[] }
  | { t: 'log'; level: LogLevel; bindings: Record<string, unknown>; obj: object | string; msg?: string }
  | { t: 'closed' };

/** To the session thread: the desk's answers, and the order to close. */
export type ToSessions =
  | { t: 'answer'; id: number; value: unknown }
  | { t: 'answer'; id: number; refusal: { reply: Reply; reason: string } }
  | { t: 'answer'; id: number; error: string }
  | { t: 'close' };

/** An object to log, with errors as plain fields: what a thread can post (and the log prints). */
export function postable(obj: object | string): object | string {
  if (typeof obj === 'string') return obj;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    out[key] = value instanceof Error ? { type: value.name, message: value.message, code: (value as { code?: unknown }).code, stack: value.stack } : value;
  }
  return out;
}
