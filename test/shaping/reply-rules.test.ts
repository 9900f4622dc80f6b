// Every built-in reply rule is pinned by the real replies it was written for: each must be decided
// by its own rule (not shadowed by an earlier one), and none may catch a success, an unknown
// user, a reply about one recipient only, or a permanent refusal.

import { describe, expect, it } from 'vitest';
import { BUILT_IN_PROVIDERS } from '../../src/shaping/providers.ts';
import { BUILT_IN_REPLY_RULES, REPLY_MATCH_CHARS, compileReplyRules, matchReply, replyLine } from '../../src/shaping/reply-rules.ts';
import type { ReplyRule } from '../../src/shaping/types.ts';

const BUILT_IN = compileReplyRules(BUILT_IN_REPLY_RULES);
const short = (s: string) => (s.length > 70 ? `${s.slice(0, 67)}...` : s);

// Replies no rule may act on.
const UNTOUCHED = [
  '250 2.0.0 OK',
  '250 2.0.0 OK  1700000000 d2e1a72fcca58-7c0e8a1e3b6si123456b3a.215 - gsmtp',
  '550 5.1.1 user unknown',
  "550-5.1.1 The email account that you tried to reach does not exist. Please try\n550-5.1.1 double-checking the recipient's email address for typos or\n" +
    '550-5.1.1 unnecessary spaces. For more information, go to\n550 5.1.1  https://support.google.com/mail/?p=NoSuchUser 41be03b00d2f7-b8d0a1e4fb3si12345a12.40 - gsmtp',
  '550 5.5.0 Requested action not taken: mailbox unavailable (S2017062302). [AM0PR01MB1234.eurprd01.prod.exchangelabs.com]',
  "554 delivery error: dd This user doesn't have a yahoo.com account (someone@yahoo.com) [0] - mta1234.mail.gq1.yahoo.com",
  // About one recipient: that recipient's own retry handles them.
  '450-4.2.1 The user you are trying to contact is receiving mail at a rate that\n450-4.2.1 prevents additional messages from being delivered. Please resend your\n' +
    '450-4.2.1 message at a later time. If the user is able to receive mail at that\n450-4.2.1 time, your message will be delivered. For more information, please\n' +
    '450-4.2.1 visit\n450 4.2.1 https://support.google.com/mail/?p=ReceivingRate 13si703206wrw.433 - gsmtp',
  '421 4.7.1 Messages to someone@icloud.com deferred due to excessive volume. Try again later - https://support.apple.com/en-us/HT204137',
  '451 4.5.1 The recipient <someone@yandex.ru> has exceeded their message rate limit. Try again later. sbr47PA4-sbr4Rewq',
  // Permanent refusals, some with the same words as a rule's 4xx reply.
  '550-5.7.1 [192.0.2.1 1] Our system has detected an unusual rate of\n550-5.7.1 unsolicited mail originating from your IP address. To protect our\n' +
    '550-5.7.1 users from spam, mail sent from your IP address has been blocked.\n550 5.7.1 Please visit https://support.google.com/mail/?p=UnsolicitedIPError - gsmtp',
  '553 5.7.2 [TSS09] All messages from 192.0.2.1 will be permanently deferred; Retrying will NOT succeed. See https://postmaster.yahooinc.com/error-codes',
  '554-gmx.net (mxgmx116) Nemesis ESMTP Service not available\n554-No SMTP service\n554-Bad DNS PTR resource record.\n' +
    '554 For explanation visit https://www.gmx.net/mail/senderguidelines?ip=192.0.2.145&c=rdns',
  '554 Transaction failed Reject due to policy restrictions. For explanation visit https://web.de/email/senderguidelines?ip=192.0.2.54&c=hi',
];

describe('built-in reply rules: each real reply is decided by its own rule', () => {
  BUILT_IN_REPLY_RULES.forEach((rule, index) => {
    for (const example of rule.examples) {
      it(`#${index} ${rule.provider} ${rule.action}: ${short(replyLine(example))}`, () => {
        expect(matchReply(BUILT_IN, example)).toBe(BUILT_IN[index]);
      });
    }
  });

  it('no rule takes a success, an unknown user, a one-recipient reply or a permanent refusal', () => {
    expect(UNTOUCHED.filter((reply) => matchReply(BUILT_IN, reply) !== null)).toStrictEqual([]);
  });

  it('no rule takes any of its own replies with the 4xx code made permanent', () => {
    const permanent = BUILT_IN_REPLY_RULES.flatMap((rule) =>
      rule.examples.map((e) => e.replace(/^4(\d\d[ -])(?:4(\.\d{1,3}\.\d{1,3}))?/gm, (_all, code: string, status?: string) => `5${code}${status ? `5${status}` : ''}`)),
    );
    expect(permanent.every((reply) => reply.startsWith('5'))).toBe(true);
    expect(permanent.filter((reply) => matchReply(BUILT_IN, reply) !== null)).toStrictEqual([]);
  });

  it('every rule is for a built-in provider, with a known action, seconds the config allows, a source and a 4xx example', () => {
    const providers = BUILT_IN_PROVIDERS.map((p) => p.name);
    for (const rule of BUILT_IN_REPLY_RULES) {
      expect(providers).toContain(rule.provider);
      expect(['suspend', 'throttle', 'reconnect-later']).toContain(rule.action);
      expect(Number.isInteger(rule.seconds) && rule.seconds >= 1 && rule.seconds <= 86_400).toBe(true);
      expect(rule.source.length).toBeGreaterThan(40);
      for (const example of rule.examples) expect(example).toMatch(/^4\d\d[ -]/);
      // Anchored on a 4xx code: the linear, 4xx-only shape the module promises.
      expect(rule.match).toMatch(/^\/\^4(?:\d\d|\\d\\d) /);
    }
  });

  it('keeps the provider of a built-in rule; a configured rule has none', () => {
    expect(BUILT_IN[0]!.provider).toBe('google');
    expect(compileReplyRules([{ match: '4.7.28', action: 'throttle', seconds: 60 }])[0]!.provider).toBeUndefined();
  });
});

describe('compileReplyRules and matchReply', () => {
  const rule = (match: string, action: ReplyRule['action'] = 'suspend', seconds = 60): ReplyRule => ({ match, action, seconds });

  it('a plain match is a case-insensitive substring, a /body/flags match a regular expression as written', () => {
    const [sub, re, reCase] = compileReplyRules([rule('TRY AGAIN LATER'), rule('/^421 4\\.7\\.0 /'), rule('/try again/')]);
    expect(sub!.needle).toBe('try again later');
    expect(matchReply([sub!], '421 4.7.0 Try again later, closing connection. - gsmtp')).toBe(sub);
    expect(matchReply([re!], '421 4.7.0 Try again later, closing connection. - gsmtp')).toBe(re);
    expect(matchReply([re!], '550 4.7.0 x')).toBeNull();
    expect(matchReply([reCase!], '421 4.7.0 Try again later')).toBeNull();
  });

  it('the first rule that matches wins: configured rules go before the built-ins', () => {
    const configured = compileReplyRules([rule('[TSS04]', 'throttle', 600)]);
    const all = [...configured, ...BUILT_IN];
    const tss04 = BUILT_IN_REPLY_RULES.find((r) => r.match.includes('TSS|IPTS'))!.examples[0];
    expect(matchReply(all, tss04)).toBe(configured[0]);
    expect(matchReply(BUILT_IN, tss04)?.action).toBe('suspend');
    expect(matchReply([], tss04)).toBeNull();
  });

  it('reads a multi-line reply as one line, continuation codes dropped', () => {
    const gmail = BUILT_IN_REPLY_RULES[0]!.examples[0];
    expect(replyLine(gmail)).toBe(
      '421 4.7.28 [203.0.113.42] Our system has detected an unusual rate of unsolicited mail originating from your IP address. To protect our ' +
        'users from spam, mail sent from your IP address has been temporarily rate limited. Please visit ' +
        'https://support.google.com/mail/?p=UnsolicitedRateLimitError to review our Bulk Email Senders Guidelines. - gsmtp',
    );
    expect(matchReply(compileReplyRules([rule('rate of unsolicited mail')]), gmail)).not.toBeNull();
    expect(replyLine('Timed out after 30000 ms waiting for mx.example.net (DATA)')).toBe('Timed out after 30000 ms waiting for mx.example.net (DATA)');
  });

  it(`reads only the first ${REPLY_MATCH_CHARS} characters of that line`, () => {
    const [late] = compileReplyRules([rule('needle')]);
    const pad = (n: number) => `421 ${'x'.repeat(n - 4)}`;
    expect(matchReply([late!], `${pad(REPLY_MATCH_CHARS - 6)}needle`)).toBe(late);
    expect(matchReply([late!], `${pad(REPLY_MATCH_CHARS - 5)}needle`)).toBeNull();
    // A megabyte from a hostile server costs what 512 characters cost.
    expect(replyLine(`421-${'a'.repeat(1_000_000)}\n421 needle`)).toHaveLength(REPLY_MATCH_CHARS);
    expect(matchReply([late!], `421-${'a'.repeat(1_000_000)}\n421 needle`)).toBeNull();
  });

  it('refuses, naming the rule, an invalid expression, the flags g and y, and nested quantifiers', () => {
    const refused = (match: string) => () => compileReplyRules([rule('4.7.28'), rule(match)]);
    expect(refused('/[0-9/')).toThrow(/reply rule "\/\[0-9\/": .*Invalid regular expression/);
    expect(refused('/x/q')).toThrow(/reply rule "\/x\/q"/);
    expect(refused('/421/g')).toThrow(/"\/421\/g": the flags g and y/);
    expect(refused('/421/y')).toThrow(/the flags g and y/);
    for (const nested of ['/(a+)+$/', '/^(?:\\s+\\w+)*x/', '/(\\d+\\.)+z/', '/((ab)*c)+/', '/(a|b?){2,}/', '/(?<w>\\w+)*!/']) {
      expect(refused(nested), nested).toThrow(/repeated group holds a quantifier/);
    }
  });

  it('accepts quantified groups without a quantifier inside, quantifiers outside groups, and escaped or bracketed symbols', () => {
    const fine = ['/(?:TSS|IPTS)+04/', '/(ab){2}c+/', '/^421 (?:4\\.7\\.0 )?\\[TSS04\\]/i', '/\\(a+\\)+/', '/[(+)]+x*/', '/(a){1,3}/', '/(?<code>\\d{3}) x/'];
    expect(() => compileReplyRules(fine.map((m) => rule(m)))).not.toThrow();
    expect(() => compileReplyRules(BUILT_IN_REPLY_RULES)).not.toThrow();
  });
});
