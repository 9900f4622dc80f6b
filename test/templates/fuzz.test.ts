import { describe, expect, it } from 'vitest';
import { fuzzRuns, fuzzSeed, nastyString, randomValue, rng, type Rng } from '../helpers/fuzz.ts';
import { startTestServer, type ApiResponse } from '../helpers/server.ts';

/**
 * Seeded fuzzing of templates: bodies stitched from tags and broken tags, then rendered and sent
 * with random variables. Whatever is stored or given, the answer is 2xx or a 4xx `{error}`,
 * never a 5xx, and a rendered HTML part never carries a variable's `<` unescaped through `{{x}}`.
 */
const NAMES = ['a', 'b', 'user.first', 'constructor', '__proto__', 'x.y.z', 'toString'];

function piece(r: Rng): string {
  const name = r.pick(NAMES);
  if (r.chance(0.9))
    return r.pick([
      () => `{{${name}}}`,
      () => `{{{${name}}}}`,
      () => `{{& ${name}}}`,
      () => `{{! ${nastyString(r).slice(0, 40).replace(/}}/g, '')} }}`,
      () => nastyString(r).slice(0, 200).replace(/[{}]/g, ''),
      () => '<p>',
    ])();
  return r.pick([
    () => `{{#${name}}}x{{/${name}}}`,
    () => `{{^${name}}}x{{/${name}}}`,
    () => `{{> ${name}}}`,
    () => '{{=<% %>=}}',
    () => '{{',
    () => '}}',
    () => '{{{',
    () => `{{${nastyString(r).slice(0, 30)}}}`,
  ])();
}

const template = (r: Rng) => Array.from({ length: 1 + r.int(6) }, () => piece(r)).join('');

function variables(r: Rng): unknown {
  if (r.chance(0.1)) return randomValue(r);
  const out: Record<string, unknown> = {};
  for (const name of ['a', 'b', 'toString']) if (r.chance(0.8)) out[name] = r.chance(0.7) ? `<i>${nastyString(r).slice(0, 60)}` : randomValue(r, 1);
  if (r.chance(0.7)) out.user = r.chance(0.8) ? { first: r.chance(0.8) ? 'Ann' : randomValue(r, 1) } : randomValue(r, 1);
  if (r.chance(0.3)) out.x = { y: { z: r.chance(0.5) ? 1 : randomValue(r, 1) } };
  return out;
}

function checkAnswer(res: ApiResponse, label: string): void {
  expect(res.status, `${label} → ${res.status} ${res.text.slice(0, 300)}`).toBeLessThan(500);
  if (res.status >= 400) expect(res.body, label).toStrictEqual({ error: expect.any(String) });
}

describe('templates fuzzing (seeded)', () => {
  it('stores, renders and sends random templates with random variables: 2xx or a 4xx {error}, never a 5xx', async () => {
    const server = await startTestServer('sqlite');
    const ws = await server.sender('fuzz', 'fuzz.test');
    const r = rng(fuzzSeed() + 7);
    const runs = fuzzRuns(150);
    const statuses = { saved: 0, refused: 0, rendered: 0, sent: 0 };
    for (let i = 0; i < runs; i++) {
      const body = {
        name: `t${i}`,
        subject:
          template(r)
            .replace(/[\r\n]/g, ' ')
            .slice(0, 998) || 's',
        html: template(r),
        text: template(r),
      };
      const saved = await server.api('POST', '/templates', { key: ws.apiKey, body });
      const label = `seed ${r.seed} run ${i}: ${JSON.stringify(body).slice(0, 300)}`;
      checkAnswer(saved, label);
      if (saved.status !== 201) {
        statuses.refused++;
        continue;
      }
      statuses.saved++;
      const vars = variables(r);
      const rendered = await server.api('POST', `/templates/${saved.body.id}/render`, { key: ws.apiKey, body: { variables: vars } });
      checkAnswer(rendered, `${label} with ${JSON.stringify(vars).slice(0, 300)}`);
      if (rendered.status === 200) {
        statuses.rendered++;
        // Every `<` that reached the HTML part came from the template or a raw tag, never from `{{a}}`.
        if (/^[^{]*\{\{a\}\}[^{]*$/.test(body.html) && typeof (vars as { a?: unknown }).a === 'string') expect(rendered.body.html).not.toContain('<i>');
      }
      const sent = await server.api('POST', '/emails', {
        key: ws.apiKey,
        body: { from: 'app@fuzz.test', to: 'u@dest.example', template: saved.body.id, variables: vars },
      });
      checkAnswer(sent, `${label} sent`);
      if (sent.status === 201) statuses.sent++;
    }
    // The inputs reach every outcome: refused at save, refused at render, rendered and sent.
    expect(statuses.refused).toBeGreaterThan(runs / 10);
    expect(statuses.saved).toBeGreaterThan(runs / 10);
    expect(statuses.rendered).toBeGreaterThan(0);
    expect(statuses.sent).toBeGreaterThan(0);
  }, 120_000);
});
