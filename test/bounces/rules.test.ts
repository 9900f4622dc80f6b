// Every rule is pinned by the real replies it was written for: each example must be decided by
// its own rule (not shadowed by an earlier one) and give that rule's reason and bounce type
// through the public classifier. Same for the notice patterns: each real line must be read by
// its own lead pattern and yield its address, and each quoted-original marker must cut there.

import { describe, expect, it } from 'vitest';
import { classifyReply, REASONS } from '../../src/bounces/index.ts';
import { ALL_TEXT_RULES, matchTextRule, withheldRules } from '../../src/bounces/classify.ts';
import { cleanAddress, fold } from '../../src/bounces/codes.ts';
import { noticeText } from '../../src/bounces/notice.ts';
import { NOTICE_LEADS, ORIGINAL_MARKERS } from '../../src/bounces/notice-patterns.ts';
import { TEXT_RULES } from '../../src/bounces/rules.ts';

const short = (s: string) => (s.length > 70 ? `${s.slice(0, 67)}...` : s);

describe('text rules: each real reply is decided by its own rule', () => {
  TEXT_RULES.forEach((rule, index) => {
    for (const example of rule.examples) {
      it(`#${index} ${rule.reason}: ${short(example)}`, () => {
        expect(matchTextRule(fold(example))?.index).toBe(index);
        const got = classifyReply({ text: example });
        const bounceType = got.status.startsWith('4') ? 'transient' : REASONS[rule.reason];
        expect({ reason: got.reason, bounceType: got.bounceType }).toEqual({ reason: rule.reason, bounceType });
      });
    }
  });

  it('every rule has at least one example and a known reason', () => {
    for (const rule of TEXT_RULES) {
      expect(rule.examples.length).toBeGreaterThan(0);
      expect(Object.keys(REASONS)).toContain(rule.reason);
    }
  });
});

describe('notice lead patterns: each real line is read by its own pattern', () => {
  NOTICE_LEADS.forEach((lead, index) => {
    for (const [line, address] of lead.examples) {
      it(`#${index}: ${short(line)}`, () => {
        const first = NOTICE_LEADS.findIndex((l) => l.pattern.test(line));
        expect(first).toBe(index);
        expect(cleanAddress(lead.pattern.exec(line)![1])).toBe(address);
      });
    }
  });
});

describe('quoted-original markers: the notice is cut at each real marker line', () => {
  ORIGINAL_MARKERS.forEach((marker, index) => {
    for (const example of marker.examples) {
      it(`#${index}: ${short(example)}`, () => {
        const notice = `This is the mail system at host mx.example.jp.\n\n<kijitora@example.jp>: 550 5.1.1 User unknown\n\n`;
        expect(noticeText(`${notice}${example}\n\nSubject: Nyaan\n`)).toBe(notice);
      });
    }
  });
});

describe('withheld evidence (leave-one-family-out)', () => {
  it('a term seen only in one family and cited nowhere is gone from that rule set, and only there', () => {
    const only = TEXT_RULES.flatMap((rule) => rule.terms.map((term) => ({ rule, term }))).find(({ term }) => term.cites.length === 0 && term.seen.length === 1)!;
    expect(only).toBeDefined();
    const family = only.term.seen[0]!;
    // A text made of the term's own words: decided by its rule with every term in use.
    const words = TEXT_RULES.flatMap((r) => r.examples).find((e) => only.term.pattern.test(e) && matchTextRule(e)?.term === only.term);
    expect(words).toBeDefined();
    const rules = withheldRules([family]);
    expect(rules.find((r) => r.rule === only.rule)!.terms).not.toContain(only.term);
    expect(matchTextRule(words!, rules)?.term).not.toBe(only.term);
    // Building a withheld set changes nothing for everyone else.
    expect(matchTextRule(words!)?.term).toBe(only.term);
    expect(ALL_TEXT_RULES.find((r) => r.rule === only.rule)!.terms).toContain(only.term);
  });
});
