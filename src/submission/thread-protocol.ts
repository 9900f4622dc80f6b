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

/**
 * An object to log as it can cross threads: an error as its plain fields, an instance of any other
 * class (a socket, say) as its text, since one that cannot be copied would fail the post.
 */
export function postable(obj: object | string): object | string {
  if (typeof obj === 'string') return obj;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (value instanceof Error) out[key] = { type: value.name, message: value.message, code: (value as { code?: unknown }).code, stack: value.stack };
    else if (typeof value === 'function') out[key] = String(value.name);
    else if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.getPrototypeOf(value) !== Object.prototype) out[key] = String(value);
    else out[key] = value;
  }
  return out;
}
