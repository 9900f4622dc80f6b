import { describe, expect, it } from 'vitest';
import { formatMatch, matches, parseMatch, routeFor, type MatchableRoute, type RouteMatch } from '../../src/routes/match.ts';

const m = (text: string): RouteMatch => {
  const parsed = parseMatch(text);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
};
const route = (id: number, match: string, priority = 0): MatchableRoute => ({ id, match: m(match), priority });

describe('parseMatch', () => {
  it('reads addresses, catch-alls and one-* patterns, lowercased', () => {
    expect(parseMatch('Support@Acme.TEST')).toStrictEqual({ prefix: 'support', suffix: null, domain: 'acme.test' });
    expect(parseMatch('*@acme.test')).toStrictEqual({ prefix: '', suffix: '', domain: 'acme.test' });
    expect(parseMatch('*+tickets@acme.test')).toStrictEqual({ prefix: '', suffix: '+tickets', domain: 'acme.test' });
    expect(parseMatch('reply-*@acme.test.')).toStrictEqual({ prefix: 'reply-', suffix: '', domain: 'acme.test' });
    expect(formatMatch(m('A*B@X.test'))).toBe('a*b@x.test');
  });

  it.each([
    ['support', /must be an address/],
    ['@acme.test', /must be an address/],
    ['a*b*@acme.test', /one `\*` only/],
    ['**@acme.test', /one `\*` only/],
    ['a@b@acme.test', /character an address cannot/],
    ['a%b@acme.test', /character an address cannot/],
    ['"a b"@acme.test', /character an address cannot/],
    ['a@*.acme.test', /not a domain name/],
    ['a@localhost', /not a domain name/],
    [`${'a'.repeat(65)}@acme.test`, /longer than 64/],
  ])('refuses %s', (input, problem) => {
    expect(parseMatch(input)).toMatch(problem);
  });
});

describe('routeFor', () => {
  it('takes the address over every pattern, the longer pattern over the shorter, a catch-all last', () => {
    const routes = [route(1, '*@acme.test'), route(2, '*+tickets@acme.test'), route(3, 'support+tickets@acme.test'), route(4, 'support*@acme.test')];
    expect(routeFor(routes, 'support+tickets@acme.test')?.id).toBe(3);
    expect(routeFor(routes, 'Bob+Tickets@ACME.test')?.id).toBe(2);
    // Both patterns match; "*+tickets" names 8 characters, "support*" 7.
    expect(routeFor(routes, 'support+x+tickets@acme.test')?.id).toBe(2);
    expect(routeFor(routes, 'supportdesk@acme.test')?.id).toBe(4);
    expect(routeFor(routes, 'anyone@acme.test')?.id).toBe(1);
    expect(routeFor(routes, 'anyone@other.test')).toBeNull();
  });

  it('among equally specific matches takes the lowest priority, then the oldest route', () => {
    expect(routeFor([route(1, '*@acme.test', 5), route(2, '*@acme.test', 1), route(3, '*@acme.test', 1)], 'a@acme.test')?.id).toBe(2);
    expect(routeFor([route(7, 'a*@acme.test', 0), route(3, '*a@acme.test', 0)], 'aa@acme.test')?.id).toBe(3);
  });

  it('never lets the prefix and suffix of a pattern overlap', () => {
    expect(matches(m('ab*ba@acme.test'), 'aba', 'acme.test')).toBe(false);
    expect(matches(m('ab*ba@acme.test'), 'abba', 'acme.test')).toBe(true);
    expect(matches(m('ab*ba@acme.test'), 'abxba', 'acme.test')).toBe(true);
  });

  it('answers nothing for a malformed recipient', () => {
    expect(routeFor([route(1, '*@acme.test')], 'acme.test')).toBeNull();
    expect(routeFor([route(1, '*@acme.test')], '@acme.test')).toBeNull();
  });
});
