// The thread that runs the SMTP submission sessions (see server.ts): the protocol, TLS and the
// sockets here, every decision asked of the desk on the main event loop.
import { parentPort, workerData } from 'node:worker_threads';
import type { Logger } from '../core/ports.ts';
import { SmtpReplyError } from '../core/smtp-reply.ts';
import { coalescingPoster, type Coalesced } from '../threads/coalesce.ts';
import { nameThisThread } from '../threads/name.ts';
import type { SubmissionDesk } from './desk.ts';
import { listenForSessions, type SubmissionListeners } from './sessions.ts';
import { postable, SESSION_THREAD_NAME, type DeskQuestion, type FromSessions, type LogLevel, type SessionThreadData, type ToSessions } from './thread-protocol.ts';

const port = parentPort!;
nameThisThread(SESSION_THREAD_NAME);
const { options, hostname } = workerData as SessionThreadData;
interface Waiting {
  resolve(value: unknown): void;
  reject(err: Error): void;
}
const waiting = new Map<number, Waiting>();
let seq = 0;

/** The question `id` waits no longer: its answer has come, or it could not be asked. */
function settle(id: number): Waiting | undefined {
  const answer = waiting.get(id);
  waiting.delete(id);
  return answer;
}

const post = coalescingPoster<FromSessions>(
  (batch, transfer) => port.postMessage(batch, transfer),
  (message, err) => {
    if (message.t === 'ask') return settle(message.id)?.reject(err);
    post({
      t: 'log',
      level: 'error',
      bindings: { role: 'submission' },
      obj: postable({ err }),
      msg: `a message of the session thread could not be posted (${message.t})`,
    });
  },
);

function threadLog(bindings: Record<string, unknown>): Logger {
  const at =
    (level: LogLevel) =>
    (obj: object | string, msg?: string): void =>
      post({ t: 'log', level, bindings, obj: postable(obj), msg });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: (more) => threadLog({ ...bindings, ...more }) };
}

function ask<T>(question: DeskQuestion, args: unknown[], transfer?: ArrayBuffer[]): Promise<T> {
  const id = ++seq;
  return new Promise<T>((resolve, reject) => {
    waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
    post({ t: 'ask', id, question, args }, transfer);
  });
}

/** The desk as seen from here: each call a question posted to the event loop that holds it. */
const desk: SubmissionDesk = {
  authenticate: (session, password) => ask('authenticate', [session, password]),
  mailFrom: (session, principal, address, declaredSize) => ask('mailFrom', [session, principal, address, declaredSize]),
  // `raw` owns its memory (sessions.ts), so it moves to the other thread instead of being copied.
  data: (session, principal, raw, rcpts) => ask('data', [session, principal, raw, rcpts], [raw.buffer as ArrayBuffer]),
};

const log = threadLog({ role: 'submission' });
let listeners: SubmissionListeners | null = null;

port.on('message', (batch: Coalesced<ToSessions>) => batch.messages.forEach(receive));

function receive(message: ToSessions): void {
  if (message.t === 'close') {
    void (listeners?.close() ?? Promise.resolve()).then(() => post({ t: 'closed' }));
    return;
  }
  const answer = settle(message.id);
  if (!answer) return;
  if ('value' in message) answer.resolve(message.value);
  else if ('refusal' in message) answer.reject(new SmtpReplyError(message.refusal.reply, message.refusal.reason));
  else answer.reject(new Error(message.error));
}

listenForSessions(desk, options, hostname, log).then(
  (started) => {
    listeners = started;
    post({ t: 'ready', ports: started.ports });
  },
  (err: Error) => post({ t: 'failed', error: err.message }),
);
