import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { parseReportSync } from '../bounces/index.ts';
import { parseReceivedMail, UNREADABLE } from './received.ts';

// Parsing is background work: on Linux this thread lowers its own priority (nice 10) so that on
// a busy machine the event loop answering HTTP and SMTP gets the CPU first. /proc/thread-self
// names this thread's id; elsewhere the thread keeps the process's priority.
const BACKGROUND_NICE = 10;
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, BACKGROUND_NICE);
} catch {
  // not Linux, or not permitted: parse at the process's priority
}

// A small DSN parsed once before the worker says it is ready, so the first real report is not
// charged the parser's warm-up against its time budget.
const WARM_UP = Buffer.from(
  'From: MAILER-DAEMON@mx.example.org\nSubject: Undelivered Mail\nMIME-Version: 1.0\n' +
    'Content-Type: multipart/report; report-type=delivery-status; boundary="B"\n\n--B\nContent-Type: text/plain\n\n' +
    '<u@example.org>: 550 5.1.1 unknown\n\n--B\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; mx.example.org\n\n' +
    'Final-Recipient: rfc822; u@example.org\nAction: failed\nStatus: 5.1.1\n\n--B--\n',
);

// One report at a time: the pool posts raw bytes and waits for the parsed report, and
// terminates this thread when the report is over its time budget.
const port = parentPort!;
port.on('message', ({ kind, segments, length }: { kind: 'report' | 'mail'; segments: Uint8Array[]; length: number }) => {
  const parts = segments.map((s) => Buffer.from(s.buffer, s.byteOffset, s.byteLength));
  const raw = Buffer.concat(parts, length);
  if (kind === 'report') return port.postMessage(parseReportSync(raw));
  // A message mailparser cannot read at all is answered as such; the worker goes on.
  parseReceivedMail(raw).then(
    (mail) => port.postMessage(mail),
    () => port.postMessage(UNREADABLE),
  );
});
parseReportSync(WARM_UP);
// The same for mail for routes: mailparser is loaded with the first message it reads, and that
// must not be a real one, timed against its budget.
await parseReceivedMail(WARM_UP).catch(() => undefined);
port.postMessage('ready');
