import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PATHOLOGICAL_KINDS, pathological } from '../bounces/pathological.ts';
import { fuzzRuns, fuzzSeed, nastyString, rng, type Rng } from '../helpers/fuzz.ts';
import { RETURN_PATH, startInbound, type InboundHarness } from './harness.ts';
import { RawSmtp, type Reply } from './smtp-client.ts';

/**
 * Seeded, bounded fuzzing of the inbound MX (part of `npm test`): mutated corpus reports,
 * pathological reports, broken MIME, and hostile SMTP command sequences. Every report that
 * reaches the final dot is answered 250 and stored; nothing crashes the listener; and /healthz,
 * polled throughout, keeps answering within 200 ms. `MAILSVC_FUZZ_SEED` and `MAILSVC_FUZZ_RUNS`
 * reproduce or lengthen a run.
 */

const CORPUS_DIR = join(import.meta.dirname, '../fixtures/bounces/messages');
const CORPUS = readdirSync(CORPUS_DIR)
  .filter((f) => f.endsWith('.eml'))
  .sort()
  .map((f) => readFileSync(join(CORPUS_DIR, f)));

function mutate(r: Rng, input: Buffer): Buffer {
  let text = input.toString('latin1');
  for (let i = 0, n = 1 + r.int(4); i < n; i++) {
    const at = r.int(text.length + 1);
    switch (r.int(7)) {
      case 0:
        text = text.slice(0, at) + nastyString(r) + text.slice(at);
        break;
      case 1:
        text = text.slice(0, at) + text.slice(at + r.int(2000));
        break;
      case 2:
        text = text.slice(0, at);
        break;
      case 3:
        text = text.slice(0, at) + text.slice(at, at + r.int(5000)).repeat(1 + r.int(20)) + text.slice(at);
        break;
      case 4:
        text = text.replace(
          /boundary="?([^";\r\n]+)"?/i,
          `boundary="${nastyString(r)
            .slice(0, 70)
            .replace(/[\r\n"]/g, '')}"`,
        );
        break;
      case 5:
        text = text.slice(0, at) + String.fromCharCode(r.int(256)) + text.slice(at + 1);
        break;
      default:
        text = text.replace(/\r?\n\r?\n/, `\nContent-Type: multipart/mixed; boundary="${'-'.repeat(r.int(200))}"\n\n`);
    }
  }
  return Buffer.from(text, 'latin1');
}

function brokenMime(r: Rng): Buffer {
  const depth = 1 + r.int(30);
  let body = 'MIME-Version: 1.0\nContent-Type: multipart/report; report-type=delivery-status; boundary="b0"\n\n';
  for (let i = 0; i < depth; i++) {
    body += `--b${r.chance(0.8) ? i : r.int(depth)}\nContent-Type: ${r.pick(['multipart/mixed', 'message/delivery-status', 'message/rfc822', 'text/html', 'text/plain; charset=x-unknown'])}; boundary="b${i + 1}"\n`;
    body += `Content-Transfer-Encoding: ${r.pick(['base64', 'quoted-printable', '8bit', 'x-bogus'])}\n\n${nastyString(r)}\n`;
    if (r.chance(0.3))
      body += `Final-Recipient: rfc822; ${nastyString(r).slice(0, 300)}\nAction: ${r.pick(['failed', 'delayed', nastyString(r).slice(0, 50)])}\nStatus: ${r.pick(['5.1.1', '4.2.2', '9.9.9', nastyString(r).slice(0, 20)])}\n\n`;
  }
  return Buffer.from(body, 'latin1');
}

function report(r: Rng): Buffer {
  switch (r.int(4)) {
    case 0:
    case 1:
      return mutate(r, r.pick(CORPUS));
    case 2:
      return pathological(r.pick(PATHOLOGICAL_KINDS), 10_000 + r.int(190_000));
    default:
      return brokenMime(r);
  }
}

/** Commands in an order and shape no well-behaved client sends. */
function hostileCommands(r: Rng, verp: string): string[] {
  const pool = [
    'EHLO fuzz.example.org',
    'HELO x',
    'MAIL FROM:<>',
    `RCPT TO:<postmaster@${RETURN_PATH}>`,
    `RCPT TO:<${verp}>`,
    'RCPT TO:<a@elsewhere.example>',
    'DATA',
    'RSET',
    'NOOP',
    'VRFY postmaster',
    'EXPN all',
    'HELP',
    'STARTTLS',
    'AUTH PLAIN AGFAYg==',
    'BDAT 10 LAST',
    'XCLIENT ADDR=1.2.3.4',
    `MAIL FROM:<${'a'.repeat(2000)}@x.example>`,
    'MAIL FROM:<@route:a@b>',
    'RCPT TO:<"quoted"@bounces.mailsvc.test>',
    '',
  ];
  return Array.from({ length: 1 + r.int(12) }, () => (r.chance(0.15) ? nastyString(r).replace(/\r?\n/g, ' ').slice(0, 3000) : r.pick(pool)));
}

/** Sends one report to `rcpt` with the null sender; the reply to the final dot. */
async function sendReport(port: number, rcpt: string, body: Buffer): Promise<Reply> {
  const c = await RawSmtp.connect(port);
  try {
    await c.command('EHLO fuzz.example.org');
    expect((await c.command('MAIL FROM:<>')).code).toBe(250);
    expect((await c.command(`RCPT TO:<${rcpt}>`)).code).toBe(250);
    return await c.data(body);
  } finally {
    await c.quit();
  }
}

/** Polls /healthz one request after another until stopped; returns each answer time in ms. */
function pollHealth(h: InboundHarness): { stop(): Promise<number[]> } {
  const samples: number[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const t0 = performance.now();
      const res = await fetch(`${h.server.url}/healthz`);
      await res.arrayBuffer();
      samples.push(performance.now() - t0);
      expect(res.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return samples;
    },
  };
}

describe('inbound MX fuzzing (seeded)', () => {
  it('answers every mutated, pathological or broken report 250 and stores it; hostile sequences break nothing; /healthz stays fast', { timeout: 120_000 }, async () => {
    const seed = fuzzSeed();
    const r = rng(seed);
    const h = await startInbound('sqlite');
    const sent = await h.delivered();
    const verp = h.verp(sent.recipients[0]!.id);
    const targets = [`postmaster@${RETURN_PATH}`, `fbl@${RETURN_PATH}`, verp];
    const health = pollHealth(h);

    let accepted = 0;
    for (let i = 0, n = fuzzRuns(60); i < n; i++) {
      const body = report(r);
      const reply = await sendReport(h.port, r.pick(targets), body);
      expect(reply.code, `seed ${seed}, report ${i}: ${reply.text}`).toBe(250);
      accepted++;

      if (i % 3 === 0) {
        const c = await RawSmtp.connect(h.port);
        for (const command of hostileCommands(r, verp)) {
          if (command === 'DATA') {
            // DATA after whatever came before: either refused, or a message with a few bytes.
            const go = await c.command('DATA');
            if (go.code === 354) expect((await c.data(nastyString(r).slice(0, 500))).code).toBeLessThan(600);
            else expect(go.code).toBeGreaterThanOrEqual(400);
            continue;
          }
          const answer = await c.command(command).catch(() => null);
          if (!answer) break;
          expect(answer.code, `seed ${seed}: ${command.slice(0, 80)}`).toBeGreaterThanOrEqual(200);
          expect(answer.code).toBeLessThan(600);
        }
        c.destroy();
      }
    }

    const samples = await health.stop();
    // Reports that arrived during hostile sequences (a DATA that went through) are stored too.
    expect((await h.reports()).length).toBeGreaterThanOrEqual(accepted);
    // The listener still takes a well-formed report after all of it.
    expect((await sendReport(h.port, `postmaster@${RETURN_PATH}`, Buffer.from('Subject: after\n\nstill here\n'))).code).toBe(250);
    const sorted = [...samples].sort((a, b) => a - b);
    const p99 = sorted[Math.ceil(sorted.length * 0.99) - 1]!;
    expect(samples.length).toBeGreaterThanOrEqual(20);
    expect(p99, `seed ${seed}: /healthz p99 over ${samples.length} polls`).toBeLessThan(200);
  });
});
