import { describe, expect, it } from 'vitest';
import { fuzzRuns, fuzzSeed, nastyString, randomValue, rng, type Rng } from '../helpers/fuzz.ts';
import { startTestServer, type ApiResponse, type TestServer } from '../helpers/server.ts';

/**
 * Seeded, bounded fuzzing of the HTTP API (part of `npm test`): mutated `POST /emails` bodies,
 * and mutated ids and query strings on every GET route. Whatever is sent, the answer is never a
 * 5xx, every error body is exactly `{"error": string}`, and the server keeps answering.
 * `MAILSVC_FUZZ_SEED` and `MAILSVC_FUZZ_RUNS` reproduce or lengthen a run.
 */

const VALID = {
  from: 'App <app@fuzz.test>',
  to: ['u@dest.example', 'Ann Lee <ann@dest.example>'],
  subject: 'Hello',
  text: 'Hi',
  html: '<p>Hi</p>',
  cc: 'c@dest.example',
  bcc: ['b@dest.example'],
  replyTo: 'r@dest.example',
  headers: { 'X-Campaign': 'fall' },
  stream: 'broadcast',
  attachments: [{ filename: 'a.txt', content: 'aGVsbG8=', content_type: 'text/plain' }],
  tags: [{ name: 'kind', value: 'welcome' }],
};
const FIELDS = [...Object.keys(VALID), 'reply_to', 'scheduled_at', '__proto__', 'constructor', 'scheduledAt', 'x'.repeat(300)];

function mutateObject(r: Rng, body: Record<string, unknown>): Record<string, unknown> {
  const out = structuredClone(body);
  for (let i = 0, n = 1 + r.int(3); i < n; i++) {
    const key = r.pick(FIELDS);
    switch (r.int(5)) {
      case 0:
        delete out[key];
        break;
      case 1:
        out[key] = randomValue(r);
        break;
      case 2:
        out[key] = Array.from({ length: r.chance(0.2) ? r.int(1200) : r.int(20) }, () => r.pick(['u@dest.example', nastyString(r).slice(0, 990)]));
        break;
      case 3:
        out[key] = { [r.pick(['__proto__', 'filename', 'content', 'X-A', 'name'])]: randomValue(r) };
        break;
      default:
        out[key] = [randomValue(r), { filename: nastyString(r), content: nastyString(r) }];
    }
  }
  return out;
}

/** Raw text: valid JSON, or JSON cut short, with bytes flipped, or nested very deep. */
function mutateText(r: Rng, json: string): string {
  switch (r.int(6)) {
    case 0:
      return json.slice(0, r.int(json.length));
    case 1: {
      const chars = [...json];
      for (let i = 0, n = 1 + r.int(5); i < n; i++) chars[r.int(chars.length)] = r.pick(['"', '{', '}', '[', ',', ':', '\\', '\u0000', 'é', '5', ' ']);
      return chars.join('');
    }
    case 2:
      return `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    case 3:
      return json.replace('"subject"', '"\\u005f_proto__":{"polluted":1},"subject"');
    case 4:
      return `${json.slice(0, -1)},"subject":"dup"}`;
    default:
      return json;
  }
}

/** Percent-encoding of any string; a lone surrogate becomes U+FFFD (encodeURIComponent throws on it). */
const enc = (s: string) => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, '\uFFFD'));

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  '',
  'application/json; charset=latin1',
  'multipart/form-data; boundary=x',
];

function checkAnswer(res: ApiResponse, label: string): void {
  expect(res.status, label).toBeLessThan(500);
  if (res.status >= 400) {
    expect(res.body, `${label} → ${res.status} ${res.text.slice(0, 300)}`).toStrictEqual({ error: expect.any(String) });
  } else {
    expect(res.body, label).not.toBeNull();
  }
}

async function setup(): Promise<{ server: TestServer; key: string }> {
  const server = await startTestServer('sqlite');
  const ws = await server.workspace('fuzz');
  await server.services.tenancy.setLimits('fuzz', { perMinute: 1_000_000, perHour: 1_000_000 });
  await server.verifiedDomain(ws.id, 'fuzz.test');
  return { server, key: ws.apiKey };
}

async function alive(server: TestServer): Promise<void> {
  const res = await fetch(`${server.url}/healthz`);
  expect(res.status).toBe(200);
  expect(await res.json()).toStrictEqual({ status: 'ok' });
}

describe('HTTP API fuzzing (seeded)', () => {
  it('answers mutated POST /emails bodies with 201 or a 4xx {error}, never a 5xx', async () => {
    const { server, key } = await setup();
    const r = rng(fuzzSeed());
    const runs = fuzzRuns(200);
    const statuses = new Map<number, number>();
    for (let i = 0; i < runs; i++) {
      const body = r.chance(0.7) ? JSON.stringify(mutateObject(r, VALID)) : mutateText(r, JSON.stringify(VALID));
      const headers: Record<string, string> = { 'content-type': r.chance(0.85) ? 'application/json' : r.pick(CONTENT_TYPES) };
      if (r.chance(0.2))
        headers['idempotency-key'] = r.chance(0.5)
          ? `k${r.int(5)}`
          : nastyString(r)
              .replace(/[^\x20-\x7e]/g, '')
              .slice(0, 400);
      const res = await server.api('POST', '/emails', { key, raw: body, headers });
      checkAnswer(res, `seed ${r.seed} run ${i}: ${body.slice(0, 200)}`);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
    await alive(server);
    // The mutations reach past the JSON parser into validation and acceptance.
    expect(statuses.get(422) ?? 0).toBeGreaterThan(runs / 10);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(201) ?? 0).toBeGreaterThan(0);
  }, 60_000);

  it('answers mutated ids and query strings on every GET route with 200 or a 4xx {error}', async () => {
    const { server, key } = await setup();
    const sent = await server.api('POST', '/emails', { key, body: { from: 'app@fuzz.test', to: 'u@dest.example', subject: 's', text: 't' } });
    expect(sent.status).toBe(201);
    const r = rng(fuzzSeed() + 1);
    const ids = () =>
      r.pick([
        String(sent.body.id),
        '0x1',
        '%201',
        '1e0',
        '01',
        '-1',
        '%',
        '%%',
        '%E0%A4%A',
        '9'.repeat(r.int(3000)),
        enc(nastyString(r).slice(0, 500)),
        nastyString(r).slice(0, 50).replace(/[#?/]/g, ''),
      ]);
    const routes = [
      () => `/emails/${ids()}`,
      () => '/emails',
      () => `/domains/${ids()}`,
      () => '/domains',
      () => '/api-keys',
      () => '/suppressions',
      () => `/suppressions/${r.pick(['transactional', 'broadcast', ids()])}/${r.pick(['u@dest.example', ids()])}`,
      () => '/usage',
      () => `/templates/${ids()}`,
      () => '/templates',
      () => '/openapi.json',
    ];
    const params = ['limit', 'cursor', 'status', 'stream', 'recipient', 'recipient_status', 'from', 'to', 'since', '__proto__', 'limit[]', ''];
    const values = () =>
      r.pick([
        '1',
        '0',
        '100',
        '101',
        '-5',
        '1e2',
        'abc',
        '',
        '2026-02-31',
        '9999-99-99',
        '0000-00-00',
        '2026-99-01',
        '2026-01-01',
        'queued',
        'broadcast',
        Buffer.from(`id:${r.int(10) ? r.int(100) : '9'.repeat(30)}`).toString('base64url'),
        '%',
        '%zz',
        enc(nastyString(r).slice(0, 300)),
      ]);
    const runs = fuzzRuns(200);
    for (let i = 0; i < runs; i++) {
      const query = Array.from({ length: r.int(4) }, () => `${r.pick(params)}=${values()}`).join('&');
      const path = `${r.pick(routes)()}${query ? `?${query}` : ''}`;
      const method = r.chance(0.9) ? 'GET' : r.pick(['HEAD', 'DELETE', 'PATCH', 'POST', 'OPTIONS']);
      const res = await server.api(method, path, {
        key,
        ...(method === 'PATCH' || method === 'POST' ? { raw: '{}', headers: { 'content-type': 'application/json' } } : {}),
      });
      if (method === 'HEAD') expect(res.status, path).toBeLessThan(500);
      else checkAnswer(res, `seed ${r.seed} run ${i}: ${method} ${path.slice(0, 200)}`);
    }
    await alive(server);
    // The message is still there: nothing the fuzzer sent deleted or cancelled it.
    expect((await server.api('GET', `/emails/${sent.body.id}`, { key })).body.status).not.toBe('canceled');
  }, 60_000);
});
