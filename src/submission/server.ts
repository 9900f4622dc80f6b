import type { Worker } from 'node:worker_threads';
import { SmtpReplyError } from '../core/smtp-reply.ts';
import { coalescingPoster, type Coalesced } from '../threads/coalesce.ts';
import { startWorker } from '../threads/start.ts';
import type { Principal } from '../tenancy/principal.ts';
import { submissionDesk, type SessionRef, type SubmissionDeps, type SubmissionDesk } from './desk.ts';
import type { SubmissionListeners, SubmissionOptions } from './sessions.ts';
import { SESSION_THREAD_NAME, type DeskQuestion, type FromSessions, type SessionThreadData, type ToSessions } from './thread-protocol.ts';

/** A session thread that dies is started again on the same ports after this long. */
const RESTART_DELAY_MS = 500;

/** The running listeners, and the thread their sessions run on. */
export interface SubmissionThread extends SubmissionListeners {
  /**
   * Ends the session thread as a crash would (sessions in progress are dropped, unanswered);
   * resolves once its successor listens on the same ports.
   */
  recycle(): Promise<void>;
}

/**
 * SMTP submission: the sessions (smtp-server, TLS, the sockets) run on a thread of their own,
 * and each decision they need (AUTH, MAIL FROM, the message) is answered here by the desk,
 * beside the store, the clock and the tenants. A message is answered 250 only once the desk
 * has stored it durably, as over HTTP. The thread's log lines come out of this process's log. A
 * thread that dies is started again on the same ports.
 */
export async function startSubmissionListeners(deps: SubmissionDeps, options: SubmissionOptions): Promise<SubmissionThread> {
  const log = deps.log.child({ role: 'submission' });
  const desk = submissionDesk(deps, options);
  const start = (ports?: SubmissionListeners['ports']) =>
    startSessionThread(desk, { options: ports ? { ...options, port: ports.submission, tlsPort: ports.submissions } : options, hostname: deps.hostname }, deps.log);

  let current = await start();
  const ports = current.ports;
  let closing = false;
  let restarting = Promise.resolve();

  const restart = () =>
    new Promise<void>((resolve) => {
      const attempt = () => {
        if (closing) return resolve();
        start(ports).then(
          (started) => {
            if (closing) void started.close();
            else watch((current = started));
            resolve();
          },
          (err: Error) => {
            log.error({ phase: 'session', err }, 'the submission session thread did not start again; trying later');
            setTimeout(attempt, RESTART_DELAY_MS).unref();
          },
        );
      };
      setTimeout(attempt, RESTART_DELAY_MS).unref();
    });

  const watch = (thread: SessionThread) => {
    void thread.exited.then((code) => {
      if (closing) return;
      log.error({ phase: 'session', code }, `the submission session thread exited (code ${code}); starting it again`);
      restarting = restart();
    });
  };
  watch(current);

  return {
    ports,
    close: async () => {
      closing = true;
      await current.close();
    },
    recycle: async () => {
      const ended = current;
      await ended.terminate();
      // The exit was seen by `watch` first (registered earlier), which began the restart.
      await ended.exited;
      await restarting;
    },
  };
}

interface SessionThread {
  ports: SubmissionListeners['ports'];
  /** Settles when the thread ends, with its exit code. */
  exited: Promise<number>;
  /** Closes the listeners (sessions finish within `closeTimeoutMs`), then ends the thread. */
  close(): Promise<void>;
  /** Ends the thread at once. */
  terminate(): Promise<void>;
}

/** A question posted by the session thread, put to the desk (the arguments as `session-thread.ts` posts them). */
function ask(desk: SubmissionDesk, question: DeskQuestion, args: unknown[]): Promise<unknown> {
  const [session, ...rest] = args as [SessionRef & { secure: boolean }, ...unknown[]];
  if (question === 'authenticate') return desk.authenticate(session, rest[0] as string | undefined);
  if (question === 'mailFrom') return desk.mailFrom(session, rest[0] as Principal | null, rest[1] as string, rest[2] as number);
  const principal = rest[0] as Principal;
  // The message's bytes arrive as a Uint8Array over the memory the thread handed over.
  const raw = rest[1] as Uint8Array;
  return desk.data(session, principal, Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), rest[2] as string[]);
}

function startSessionThread(desk: SubmissionDesk, data: SessionThreadData, log: SubmissionDeps['log']): Promise<SessionThread> {
  const worker: Worker = startWorker(import.meta.url, 'session-thread', { name: SESSION_THREAD_NAME, workerData: data });
  const send = coalescingPoster<ToSessions>(
    (batch, transfer) => worker.postMessage(batch, transfer),
    (message, err) => {
      // An answer that cannot cross (never expected: the desk answers plain data) fails that session's command alone.
      if (message.t === 'answer') send({ t: 'answer', id: message.id, error: `the answer could not reach the session: ${err.message}` });
    },
  );
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  let closed: (() => void) | null = null;

  const answer = (id: number, asking: Promise<unknown>) => {
    asking.then(
      (value) => send({ t: 'answer', id, value }),
      (err: Error) => {
        if (err instanceof SmtpReplyError) send({ t: 'answer', id, refusal: { reply: err.reply, reason: err.reason } });
        else send({ t: 'answer', id, error: err.message });
      },
    );
  };

  return new Promise<SessionThread>((resolve, reject) => {
    const thread: SessionThread = {
      ports: { submission: 0, submissions: 0 },
      exited,
      close: async () => {
        const done = new Promise<void>((resolve) => (closed = resolve));
        send({ t: 'close' });
        await Promise.race([done, exited]);
        await worker.terminate();
      },
      terminate: async () => {
        await worker.terminate();
      },
    };
    worker.on('error', (err) => {
      log.error({ role: 'submission', phase: 'session', err }, 'the submission session thread failed');
      reject(err);
    });
    void exited.then((code) => reject(new Error(`the submission session thread exited with code ${code} before it listened`)));
    const receive = (message: FromSessions) => {
      switch (message.t) {
        case 'ask':
          answer(message.id, ask(desk, message.question, message.args));
          return;
        case 'log': {
          const target = Object.keys(message.bindings).length > 0 ? log.child(message.bindings) : log;
          target[message.level](message.obj, message.msg);
          return;
        }
        case 'ready':
          thread.ports = message.ports;
          return resolve(thread);
        case 'failed':
          reject(new Error(message.error));
          void worker.terminate();
          return;
        case 'closed':
          closed?.();
          return;
      }
    };
    worker.on('message', (batch: Coalesced<FromSessions>) => batch.messages.forEach(receive));
  });
}
