import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PATHOLOGICAL_KINDS, pathological } from '../bounces/pathological.ts';
import { floodInThread } from './flood-sender.ts';
import { RETURN_PATH, startInbound } from './harness.ts';

const REPORTS = 10;
const REPORT_BYTES = 10 * 1024 * 1024;

/** The q-quantile of the samples (nearest rank). */
function quantile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

/** Ten 10 MB reports of the pathological families, CRLF lines, written to files. */
function floodFiles(): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'mailsvc-flood-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return Array.from({ length: REPORTS }, (_, i) => {
    const kind = PATHOLOGICAL_KINDS[i % PATHOLOGICAL_KINDS.length]!;
    const file = join(dir, `${i}-${kind}.eml`);
    writeFileSync(file, pathological(kind, REPORT_BYTES).toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1');
    return file;
  });
}

// While ten 10 MB adversarial reports arrive, the API keeps answering within 200 ms at the 99th
// percentile. The reports come from another thread; requests are timed one after another, so
// each sample is the server's answer time, not a queue built by the test.
// The same requests are also timed without the flood, before and after it: on a machine so busy
// (a full test suite, other builds) that the idle server itself answers slowly, the bound is
// twice that idle p99 — the flood may not double it — and 200 ms otherwise.
const BASELINE_PAIRS = 60;
describe('the server stays responsive while reports arrive', () => {
  it('answers /healthz and POST /emails within 200 ms (p99) during ten 10 MB adversarial reports', { timeout: 120_000 }, async () => {
    const h = await startInbound('sqlite');
    const { apiKey } = await h.server.workspace('flood');
    await h.server.services.tenancy.setLimits('flood', { perMinute: 1_000_000, perHour: 1_000_000 });
    await h.server.verifiedDomain((await h.server.services.tenancy.workspaceByName('flood')).id, 'flood.test');
    const files = floodFiles();

    const health: number[] = [];
    const sends: number[] = [];
    const timed = async (into: number[], request: () => Promise<Response>, status: number) => {
      const t0 = performance.now();
      const res = await request();
      await res.arrayBuffer();
      into.push(performance.now() - t0);
      expect(res.status).toBe(status);
    };
    const post = () =>
      fetch(`${h.server.url}/api/v1/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from: 'news@flood.test', to: 'user@example.org', subject: 'During the flood', text: 'Hello' }),
      });
    // Warm both routes (first-request compilation is not what is measured).
    await timed([], () => fetch(`${h.server.url}/healthz`), 200);
    await timed([], post, 201);

    const idle = { health: [] as number[], sends: [] as number[] };
    const baseline = async () => {
      for (let i = 0; i < BASELINE_PAIRS; i++) {
        await timed(idle.health, () => fetch(`${h.server.url}/healthz`), 200);
        await timed(idle.sends, post, 201);
      }
    };
    await baseline();

    let done = false;
    // Five sessions at a time, as one sending MTA's connection limit would have it.
    const flood = floodInThread(h.port, `fbl@${RETURN_PATH}`, files, 5).finally(() => {
      done = true;
    });
    while (!done) {
      await timed(health, () => fetch(`${h.server.url}/healthz`), 200);
      await timed(sends, post, 201);
    }
    const codes = await flood;
    await baseline();

    // Every session got through to a 250 for its report, then 221 to QUIT.
    expect(codes).toEqual(Array.from({ length: REPORTS }, () => [220, 250, 250, 250, 354, 250, 221]));
    expect(await h.reports()).toHaveLength(REPORTS);
    expect(health.length).toBeGreaterThanOrEqual(20);
    const p99 = { health: quantile(health, 0.99), send: quantile(sends, 0.99) };
    const bound = {
      health: Math.max(200, 2 * quantile(idle.health, 0.99)),
      send: Math.max(200, 2 * quantile(idle.sends, 0.99)),
    };
    console.info(
      `during the flood: ${health.length} /healthz p99 ${p99.health.toFixed(1)} ms (bound ${bound.health.toFixed(0)}), ` +
        `${sends.length} POST /emails p99 ${p99.send.toFixed(1)} ms (bound ${bound.send.toFixed(0)}); ` +
        `idle p99 ${quantile(idle.health, 0.99).toFixed(1)} and ${quantile(idle.sends, 0.99).toFixed(1)} ms`,
    );
    expect(p99.health).toBeLessThan(bound.health);
    expect(p99.send).toBeLessThan(bound.send);
  });
});
