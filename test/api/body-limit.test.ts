import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, ftruncateSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../helpers/server.ts';
import { scratchStore, type ScratchStore } from '../helpers/stores.ts';
import { createLogger } from '../../src/log/logger.ts';
import { startServer, type RunningServer } from '../../src/main.ts';

/**
 * A body over `http.bodyLimit` is answered 413 while the client is still sending it. Whatever
 * the client (one that writes the whole body before it reads, one that reads as it writes, one
 * that stops sending at the first answer), it reads that answer rather than a broken pipe, and
 * the server reads no more than a bounded amount of what it refused.
 */

const LIMIT = 10 * 1024 * 1024; // the default http.bodyLimit
const MB = 1024 * 1024;
const SIZES = [11 * MB, 100 * MB];
const RUNS = 20;
const CHUNK = Buffer.alloc(256 * 1024, 0x20); // spaces: the bytes are never parsed

interface Outcome {
  status: number;
  body: unknown;
  /** Bytes of the body the client got out before the connection ended. */
  written: number;
  /** An error the client met while still sending, after it had the whole answer. */
  lateError: string | null;
}

/** Node's http.request as a simple client uses it: write the whole body, then end, then read. */
function nodeRequest(url: string, key: string, size: number): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/api/v1/emails`, {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': size },
    });
    let answer: { status: number; body: unknown } | null = null;
    let lateError: string | null = null;
    let settled = false;
    let closed = false;
    // What the kernel took from the client before the connection ended.
    let written = 0;
    const settle = () => {
      if (!settled && answer && closed) {
        settled = true;
        resolve({ ...answer, written, lateError });
      }
    };
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        answer = { status: res.statusCode!, body: JSON.parse(text) };
        settle();
      });
      res.on('error', (err) => (answer ? undefined : reject(err)));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      // Before the whole answer was read, an error is the failure this test is about.
      if (!answer) return reject(new Error(`${err.code ?? err.message} after ${written} bytes, before the answer`));
      lateError = err.code ?? err.message;
      settle();
    });
    // Settled once the connection is gone, so the server's count of what it threw away is final.
    req.on('socket', (socket) => socket.once('close', () => ((closed = true), settle())));
    // The whole body at once, as a client holding it in memory writes it: queued chunks of one
    // shared buffer, so no 100 MB is allocated.
    for (let at = 0; at < size; at += CHUNK.length) {
      const n = Math.min(CHUNK.length, size - at);
      req.write(CHUNK.subarray(0, n), (err) => (err ? undefined : (written += n)));
    }
    req.end();
  });
}

/** fetch with a streamed body (sent chunked): the answer is read whenever it arrives. */
async function fetchRequest(url: string, key: string, size: number): Promise<Outcome> {
  let written = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (written >= size) return controller.close();
      const n = Math.min(CHUNK.length, size - written);
      written += n;
      controller.enqueue(CHUNK.subarray(0, n));
    },
  });
  const res = await fetch(`${url}/api/v1/emails`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body,
    duplex: 'half',
  } as RequestInit);
  return { status: res.status, body: await res.json(), written, lateError: null };
}

const hasCurl = spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0;

/** curl uploading a file of the size (sparse: no disk, no memory). */
function curlRequest(url: string, key: string, file: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', [
      '-sS',
      '-X',
      'POST',
      '-T',
      file,
      '-H',
      `Authorization: Bearer ${key}`,
      '-H',
      'Content-Type: application/json',
      '-w',
      '\\n%{http_code} %{size_upload}',
      `${url}/api/v1/emails`,
    ]);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const [text, tail] = [out.slice(0, out.lastIndexOf('\n')), out.slice(out.lastIndexOf('\n') + 1)];
      const [status, uploaded] = tail.split(' ').map(Number);
      if (code !== 0 && status !== 413) return reject(new Error(`curl exited ${code}: ${err}`));
      resolve({ status: status!, body: JSON.parse(text), written: uploaded!, lateError: code === 0 ? null : err.trim() });
    });
  });
}

type Client = (url: string, key: string, size: number) => Promise<Outcome>;

/**
 * What the server read and threw away after its answers so far (its own count, on /metrics),
 * once no connection is still reading: a client's side of a connection may close before the
 * server has read what the kernel holds for it.
 */
async function discardedSoFar(url: string): Promise<number> {
  for (;;) {
    const text = await (await fetch(`${url}/metrics`)).text();
    const figure = (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
    if (figure('mailsvc_http_lingering_connections') === 0) return figure('mailsvc_http_discarded_body_bytes_total');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** One client's run: what it read, and what the server threw away for it. */
async function run(server: { url: string }, client: Client, key: string, size: number): Promise<Outcome & { discarded: number }> {
  const before = await discardedSoFar(server.url);
  const outcome = await client(server.url, key, size);
  return { ...outcome, discarded: (await discardedSoFar(server.url)) - before };
}

/** At most twice the limit after answering (plus one socket read). */
const MOST_DISCARDED = 2 * LIMIT + 64 * 1024;

/**
 * Twenty runs of each size through one client. `keepsSending`: the client sends the whole body
 * whatever the answer (curl stops at the first answer instead).
 */
async function twentyOfEach(server: { url: string }, apiKey: string, client: Client, keepsSending: boolean): Promise<void> {
  for (const size of SIZES) {
    const runs: (Outcome & { discarded: number })[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await run(server, client, apiKey, size));
    for (const [i, outcome] of runs.entries()) {
      expect(outcome.status, `${size} bytes, run ${i}`).toBe(413);
      expect(outcome.body).toStrictEqual({ error: expect.stringMatching(/limit/) });
      expect(outcome.discarded, `${size} bytes, run ${i}`).toBeLessThanOrEqual(MOST_DISCARDED);
    }
    if (size <= 2 * LIMIT) {
      // Within the bound the whole body is read: nothing fails, not even a late write.
      expect(runs.map((r) => r.lateError)).toStrictEqual(Array(RUNS).fill(null));
      if (keepsSending) expect(runs.map((r) => r.written >= size)).toStrictEqual(Array(RUNS).fill(true));
    } else if (keepsSending) {
      // Past it, the rest is refused: 100 MB are never all taken.
      expect(Math.max(...runs.map((r) => r.written))).toBeLessThan(size);
    }
  }
}

describe('a body over http.bodyLimit is answered 413, readable by every client, and read no further than a bound', () => {
  // One server for the file: each test's figures are its own, read once no connection lingers,
  // and each test has a key of its own (40 requests, under its 60 a minute).
  let store: ScratchStore;
  let running: RunningServer;
  const server = { url: '' };
  let workspaces = 0;
  const newKey = async () => (await running.services.tenancy.createWorkspace(`uploads${++workspaces}`)).apiKey;
  beforeAll(async () => {
    store = await scratchStore('sqlite');
    running = await startServer(testConfig(store), { roles: ['api'], overrides: { log: createLogger('silent') } });
    server.url = running.url!;
  });
  afterAll(async () => {
    await running?.close();
    await store?.drop();
  });

  it(`Node's http.request writing the whole body, then reading: ${RUNS} runs each of 11 MB and 100 MB`, { timeout: 60_000 }, async () => {
    await twentyOfEach(server, await newKey(), nodeRequest, true);
  });

  it('the same for any answer sent before the body: a 401 to a 100 MB upload with a wrong key', async () => {
    for (let i = 0; i < 3; i++) {
      const outcome = await run(server, nodeRequest, 'mk_wrong', 100 * MB);
      expect(outcome.status).toBe(401);
      expect(outcome.body).toStrictEqual({ error: 'Invalid or missing API key' });
      expect(outcome.discarded).toBeGreaterThan(0);
      expect(outcome.discarded).toBeLessThanOrEqual(MOST_DISCARDED);
    }
  });

  it(`fetch with a streamed body: ${RUNS} runs each of 11 MB and 100 MB`, { timeout: 60_000 }, async () => {
    await twentyOfEach(server, await newKey(), fetchRequest, true);
  });

  it(`curl uploading a file: ${RUNS} runs each of 11 MB and 100 MB`, { timeout: 60_000 }, async (ctx) => {
    ctx.skip(!hasCurl, 'curl is not installed');
    const dir = mkdtempSync(join(tmpdir(), 'mailsvc-413-'));
    ctx.onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const files = new Map(
      SIZES.map((size) => {
        const file = join(dir, `${size}.json`);
        const fd = openSync(file, 'w');
        ftruncateSync(fd, size); // sparse: no disk used
        closeSync(fd);
        return [size, file];
      }),
    );
    await twentyOfEach(server, await newKey(), (url, key, size) => curlRequest(url, key, files.get(size)!), false);
  });
});
