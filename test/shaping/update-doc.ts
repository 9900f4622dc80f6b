// Rewrites the generated tables of docs/SHAPING.md from src/shaping/providers.ts and
// reply-rules.ts. Run after changing the built-in data: npx tsx test/shaping/update-doc.ts

import { readFileSync, writeFileSync } from 'node:fs';
import { SHAPING_DOC, withTables } from './doc-tables.ts';

const page = readFileSync(SHAPING_DOC, 'utf8');
const updated = withTables(page);
writeFileSync(SHAPING_DOC, updated);
console.log(updated === page ? 'docs/SHAPING.md: tables already current' : 'docs/SHAPING.md: tables rewritten');
