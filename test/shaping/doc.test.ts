import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { groupOf, limitsOf } from '../../src/shaping/groups.ts';
import { BUILT_IN_PROVIDERS } from '../../src/shaping/providers.ts';
import { BUILT_IN_REPLY_RULES, compileReplyRules, matchReply } from '../../src/shaping/reply-rules.ts';
import type { ProviderRule, ReplyRule, ShapingLimits } from '../../src/shaping/types.ts';
import { SHAPING_DOC, withTables } from './doc-tables.ts';

const page = readFileSync(SHAPING_DOC, 'utf8');

describe('docs/SHAPING.md', () => {
  it('holds the built-in tables as the data renders them (npx tsx test/shaping/update-doc.ts rewrites them)', () => {
    expect(page).toBe(withTables(page));
  });

  it('names every built-in provider and shows every built-in rule', () => {
    for (const p of BUILT_IN_PROVIDERS) expect(page).toContain(`| \`${p.name}\` |`);
    for (const r of BUILT_IN_REPLY_RULES) expect(page).toContain(`\`${r.match.replace(/\|/g, '\\|')}\``);
  });

  it('keeps the sections another part of the work fills in', () => {
    expect(page).toMatch(/^## Queue control\n\n\S/m);
    expect(page).toMatch(/^## Seeing it\n\n\S/m);
  });
});

describe("docs/SHAPING.md's configuration example", () => {
  const block = /```json\n([\s\S]*?)```/.exec(page);
  const example = JSON.parse(block![1]!) as { shaping: { defaults: ShapingLimits; providers: ProviderRule[]; rules: ReplyRule[] } };
  const { shaping } = example;

  it('is a valid configuration', () => {
    const config = loadConfig({ env: {}, local: false, overrides: example });
    expect(config.shaping.providers.map((p) => p.name)).toStrictEqual(['fastmail', 'google']);
  });

  it('compiles, and its rules act on the replies they are written for before the built-ins', () => {
    const rules = [...compileReplyRules(shaping.rules), ...compileReplyRules(BUILT_IN_REPLY_RULES)];
    expect(matchReply(rules, '421 4.7.0 Too many connections from your IP (192.0.2.1)')?.action).toBe('reconnect-later');
    expect(matchReply(rules, '421 Throttled - try again later. See postmaster.comcast.net RL000010')?.action).toBe('suspend');
  });

  it('does what the page says of its providers', () => {
    const providers = [...shaping.providers, ...BUILT_IN_PROVIDERS];
    expect(groupOf(['in1-smtp.messagingengine.com', 'in2-smtp.messagingengine.com'], providers)).toBe('provider:fastmail');
    expect(limitsOf('provider:google', shaping.defaults, providers)).toStrictEqual({ connections: 10, perMinute: null, perConnection: 50 });
  });
});
