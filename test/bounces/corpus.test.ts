// The corpus of real bounces, complaints and auto-replies scored as its README's "Scoring"
// section defines (see scoring.ts), overall and for the standard formats.

import { beforeAll, describe, expect, it } from 'vitest';
import type { ParseOutput } from '../../src/bounces/index.ts';
import { formatFigures, loadManifest, parseCorpus, pct, score, type Figures, type ManifestEntry } from './scoring.ts';

const FLOORS: Record<keyof Figures, number> = { suppression: 96, class: 88, status: 90, recipients: 95, kind: 100 };

let manifest: ManifestEntry[];
let outputs: Map<string, ParseOutput>;

beforeAll(async () => {
  manifest = loadManifest();
  outputs = await parseCorpus(manifest);
});

function expectFloors(name: string, entries: ManifestEntry[]) {
  const { figures, misses } = score(entries, outputs);
  console.log(formatFigures(name, figures));
  const failing = (Object.keys(FLOORS) as (keyof Figures)[]).filter((k) => pct(figures[k]) < FLOORS[k]);
  if (failing.length > 0) for (const m of misses) console.log(`  miss ${m.figure} ${m.file}: ${m.detail}`);
  expect(failing).toEqual([]);
}

describe('bounce corpus', () => {
  it('parses every file without throwing', () => {
    expect(outputs.size).toBe(manifest.length);
    expect(manifest.length).toBeGreaterThan(300);
  });

  it('meets the floors overall', () => {
    expectFloors('overall', manifest);
    const { misses } = score(manifest, outputs);
    const byFamily = new Map<string, number>();
    for (const m of misses) byFamily.set(m.family, (byFamily.get(m.family) ?? 0) + 1);
    console.log(`misses by family: ${[...byFamily].sort((a, b) => b[1] - a[1]).map(([f, n]) => `${f} ${n}`).join(', ')}`);
  });

  for (const family of ['rfc3464', 'arf', 'rfc3834']) {
    it(`meets the floors for ${family}`, () => expectFloors(family, manifest.filter((m) => m.family === family)));
  }
});
