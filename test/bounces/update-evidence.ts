// Rewrites the `seen` column of every text-rule term from the corpus: the families in which the
// term matches a recipient's reply whose label supports the term's rule (corpusEvidence in
// scoring.ts). Run after changing a rule or the corpus: npx tsx test/bounces/update-evidence.ts

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TEXT_RULES } from '../../src/bounces/rules.ts';
import { corpusEvidence, loadManifest, parseCorpus } from './scoring.ts';

const manifest = loadManifest();
const evidence = corpusEvidence(manifest, await parseCorpus(manifest));
const bySource = new Map(TEXT_RULES.flatMap((r) => r.terms).map((t) => [t.pattern.source, [...evidence.get(t)!].sort().join(' ')]));

const ROW = /^(\s*\[)(\/.*\/), '([^']*)', '([^']*)'(\],?)$/;
for (const name of ['text-rules.ts', 'vocabulary.ts']) {
  const path = fileURLToPath(new URL(`../../src/bounces/${name}`, import.meta.url));
  let changed = 0;
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .map((line) => {
      const m = ROW.exec(line);
      if (!m) return line;
      const seen = bySource.get(new RegExp(m[2]!.slice(1, -1)).source);
      if (seen === undefined) throw new Error(`${name}: no term for ${m[2]}`);
      if (seen !== m[4]) changed++;
      return `${m[1]}${m[2]}, '${m[3]}', '${seen}'${m[5]}`;
    });
  writeFileSync(path, lines.join('\n'));
  console.log(`${name}: ${changed} terms updated`);
}
