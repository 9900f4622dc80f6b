import { Worker } from 'node:worker_threads';

// A raw SMTP client in a worker thread of its own, at lower priority: the megabytes it writes
// must not take the event loop of the server under test, which runs in the test's own thread.
// Plain JavaScript so the thread needs no TypeScript loader.
const SENDER = `
const { workerData, parentPort } = require('node:worker_threads');
const net = require('node:net');
const fs = require('node:fs');
const os = require('node:os');
// On the internet the sender is another machine: here its thread yields the CPU to the server's
// event loop on a busy machine (Linux; elsewhere it keeps the process's priority).
try { os.setPriority(Number(fs.readlinkSync('/proc/thread-self').split('/').pop()), 10); } catch {}

function send(port, rcpt, file) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const steps = ['EHLO flood.example.org', 'MAIL FROM:<>', 'RCPT TO:<' + rcpt + '>', 'DATA', null, 'QUIT'];
    const codes = [];
    let buffer = '';
    socket.on('error', reject);
    socket.on('close', () => resolve(codes));
    socket.on('data', (d) => {
      buffer += d.toString('latin1');
      let i;
      while ((i = buffer.indexOf('\\r\\n')) >= 0) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        if (line[3] === '-') continue;
        codes.push(Number(line.slice(0, 3)));
        const next = steps.shift();
        if (next === undefined) return socket.end();
        if (next !== null) { socket.write(next + '\\r\\n'); continue; }
        const body = fs.createReadStream(file);
        body.on('end', () => socket.write('\\r\\n.\\r\\n'));
        body.pipe(socket, { end: false });
      }
    });
  });
}

async function sendAll({ port, rcpt, files, concurrency }) {
  const codes = [];
  for (let i = 0; i < files.length; i += concurrency) {
    codes.push(...(await Promise.all(files.slice(i, i + concurrency).map((file) => send(port, rcpt, file)))));
  }
  return codes;
}

sendAll(workerData).then(
  (codes) => parentPort.postMessage({ codes }),
  (err) => parentPort.postMessage({ error: String(err) }),
);
`;

/**
 * Sends every file (CRLF lines, none starting with a dot) as one message over its own connection,
 * `concurrency` connections at a time; resolves with the reply codes of each session: greeting,
 * EHLO, MAIL, RCPT, DATA, the final dot, QUIT.
 */
export function floodInThread(port: number, rcpt: string, files: string[], concurrency: number): Promise<number[][]> {
  const worker = new Worker(SENDER, { eval: true, workerData: { port, rcpt, files, concurrency } });
  return new Promise((resolve, reject) => {
    worker.once('message', (m: { codes?: number[][]; error?: string }) => {
      void worker.terminate();
      if (m.codes) resolve(m.codes);
      else reject(new Error(m.error));
    });
    worker.once('error', reject);
  });
}
