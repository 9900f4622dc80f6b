// The tables of docs/SHAPING.md, rendered from the built-in data. doc.test.ts checks that the page
// holds exactly these; `npx tsx test/shaping/update-doc.ts` writes them after the data changes.

import { fileURLToPath } from 'node:url';
import { BUILT_IN_PROVIDERS } from '../../src/shaping/providers.ts';
import { BUILT_IN_REPLY_RULES, replyLine } from '../../src/shaping/reply-rules.ts';

export const SHAPING_DOC = fileURLToPath(new URL('../../docs/SHAPING.md', import.meta.url));

/** Text for a table cell: a `|` would end the cell. */
const cell = (text: string) => text.replace(/\|/g, '\\|');
const code = (text: string) => `\`${cell(text)}\``;

function providerTable(): string {
  const rows = BUILT_IN_PROVIDERS.map((p) =>
    [
      code(p.name),
      p.mx.map(code).join(', '),
      String(p.connections ?? 'default'),
      p.perMinute === undefined ? 'default' : p.perMinute === null ? 'unlimited' : String(p.perMinute),
      String(p.perConnection ?? 'default'),
      cell(p.source),
    ].join(' | '),
  );
  return ['| provider | MX host suffixes | connections | perMinute | perConnection | source |', '|---|---|---|---|---|---|', ...rows.map((r) => `| ${r} |`)].join('\n');
}

function replyRuleTable(): string {
  const rows = BUILT_IN_REPLY_RULES.map((r) =>
    [code(r.provider), code(r.match), r.action, String(r.seconds), r.examples.map((e) => code(replyLine(e))).join('<br>'), cell(r.source)].join(' | '),
  );
  return ['| provider | match | action | seconds | replies it was written for | source |', '|---|---|---|---|---|---|', ...rows.map((r) => `| ${r} |`)].join('\n');
}

const TABLES = { providers: providerTable, 'reply-rules': replyRuleTable };

/** `page` with each generated table (between `<!-- NAME:start ... -->` and `<!-- NAME:end -->`) rendered afresh. */
export function withTables(page: string): string {
  let out = page;
  for (const [name, render] of Object.entries(TABLES)) {
    const block = new RegExp(`(<!-- ${name}:start[^>]*-->\\n)[\\s\\S]*?(\\n<!-- ${name}:end -->)`);
    if (!block.test(out)) throw new Error(`docs/SHAPING.md has no ${name}:start/${name}:end markers`);
    out = out.replace(block, (_all, start: string, end: string) => `${start}${render()}${end}`);
  }
  return out;
}
