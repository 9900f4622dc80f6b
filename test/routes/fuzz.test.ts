import { describe, expect, it } from 'vitest';
import { fuzzRuns, fuzzSeed, nastyString, rng, type Rng } from '../helpers/fuzz.ts';
import { RawSmtp, type Reply } from '../inbound/smtp-client.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import { compose, routeWorld, type RouteWorld } from './world.ts';

/**
 * Seeded, bounded fuzzing of the route path: broken and mutated MIME sent to a route. Each
 * message that reaches the final dot is stored and POSTed, or refused cleanly (554 5.6.0 when it
 * cannot be read, 451 when reading it runs out of time); the listener never fails otherwise, and
 * /healthz, polled throughout, keeps answering within 200 ms. `MAILSVC_FUZZ_SEED` and
 * `MAILSVC_FUZZ_RUNS` reproduce or lengthen a run.
 */

const CLEAN_REFUSALS = ['554 5.6.0', '451 4.3.0'];

function brokenMime(r: Rng): string {
  const depth = 1 + r.int(40);
  let body = `From: ${r.chance(0.5) ? 'a@plain.test' : nastyString(r).slice(0, 200)}\nSubject: ${nastyString(r).slice(0, 500)}\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b0"\n\n`;
  for (let i = 0; i < depth; i++) {
    const type = r.pick(['multipart/mixed', 'multipart/alternative', 'message/rfc822', 'text/html', 'text/plain; charset=x-unknown', 'application/octet-stream']);
    body += `--b${r.chance(0.8) ? i : r.int(depth)}\nContent-Type: ${type}; boundary="b${i + 1}"; name="${nastyString(r)
      .slice(0, 80)
      .replace(/[\r\n"]/g, '')}"\n`;
    body += `Content-Disposition: ${r.pick(['attachment', 'inline', nastyString(r).slice(0, 40)])}; filename*=UTF-8''${Buffer.from(nastyString(r).slice(0, 60)).toString('base64url')}\n`;
    body += `Content-Transfer-Encoding: ${r.pick(['base64', 'quoted-printable', '8bit', 'x-bogus'])}\n\n${nastyString(r)}\n`;
  }
  return body;
}

function mutate(r: Rng, text: string): string {
  for (let i = 0, n = 1 + r.int(4); i < n; i++) {
    const at = r.int(text.length + 1);
    switch (r.int(4)) {
      case 0:
        text = text.slice(0, at) + nastyString(r) + text.slice(at);
        break;
      case 1:
        text = text.slice(0, at) + text.slice(at + r.int(2000));
        break;
      case 2:
        text = text.slice(0, at) + text.slice(at, at + r.int(3000)).repeat(1 + r.int(20)) + text.slice(at);
        break;
      default:
        text = text.slice(0, at) + String.fromCharCode(r.int(256)) + text.slice(at + 1);
    }
  }
  return text;
}

async function sendTo(world: RouteWorld, rcpt: string, body: string): Promise<Reply> {
  const c = await RawSmtp.connect(world.port);
  try {
    await c.command('EHLO fuzz.example.org');
    expect((await c.command('MAIL FROM:<fuzz@plain.test>')).code).toBe(250);
    expect((await c.command(`RCPT TO:<${rcpt}>`)).code).toBe(250);
    return await c.data(body);
  } finally {
    await c.quit();
  }
}

function pollHealth(world: RouteWorld): { stop(): Promise<number[]> } {
  const samples: number[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const t0 = performance.now();
      const res = await fetch(`${world.server.url}/healthz`);
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

describe('route path fuzzing (seeded)', () => {
  it('stores and POSTs every broken or mutated message it can read, refuses the rest cleanly, and /healthz stays fast', { timeout: 120_000 }, async () => {
    const seed = fuzzSeed();
    const r = rng(seed);
    const world = await routeWorld('sqlite');
    const receiver = await startReceiver();
    await world.route('*@acme.test', receiver.url);
    const base = (
      await compose({
        from: 'a@plain.test',
        to: 'in@acme.test',
        subject: 'base',
        text: 'hello',
        html: '<p>hello</p>',
        attachments: [{ filename: 'x.txt', content: 'x' }],
      })
    ).toString('latin1');
    const health = pollHealth(world);

    let stored = 0;
    for (let i = 0, n = fuzzRuns(40); i < n; i++) {
      const body = r.chance(0.5) ? brokenMime(r) : mutate(r, base);
      const reply = await sendTo(world, `fuzz${i}@acme.test`, body);
      const line = `${reply.code} ${reply.text.slice(0, 9)}`;
      if (reply.code === 250) stored++;
      else expect(CLEAN_REFUSALS, `seed ${seed}, message ${i}: ${reply.code} ${reply.text}`).toContain(line);
    }

    await receiver.waitFor(stored, 30_000);
    for (const req of receiver.requests) expect(JSON.parse(req.raw.toString('utf8')).event).toBe('email.received');
    expect((await sendTo(world, 'after@acme.test', 'Subject: after\n\nstill here\n')).code).toBe(250);
    const samples = await health.stop();
    const sorted = [...samples].sort((a, b) => a - b);
    const p99 = sorted[Math.ceil(sorted.length * 0.99) - 1]!;
    expect(samples.length).toBeGreaterThanOrEqual(20);
    expect(p99, `seed ${seed}: /healthz p99 over ${samples.length} polls`).toBeLessThan(200);
  });
});
