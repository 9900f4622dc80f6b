// The text rules in the order they are tried; see reasons.ts for the format and why order
// matters, and docs/BOUNCES.md for the signal order as a whole. The first match wins:
//   1. provider tables: one provider's documented code or fixed text says more than its words;
//   2. the recipient's mailbox state that is not "gone" (full, message too large for it);
//   3. disabled or moved mailboxes (permanent, but stated positively);
//   4. refusals of this message or sender (blocked): relay, RFC format, authentication, reverse
//      DNS, blocklists, reputation, malware, spam, sender, security, content — before the
//      "does not exist" words, so a policy refusal dressed as "user unknown" is not suppressed;
//   5. the domain or mailbox does not exist (permanent);
//   6. transient conditions, then generic policy and system words.

import type { TextRule } from './reasons.ts';
import { rule } from './rule-data.ts';
import { REFUSAL_RULES } from './refusal-vocabulary.ts';
import { MAILBOX_STATE_RULES, NOT_FOUND_RULES, TRANSIENT_RULES, GENERIC_RULES } from './vocabulary.ts';

const PROVIDER_RULES: readonly TextRule[] = [
  rule({
    // Spectrum (Charter) writes its own "AUP#" code into every refusal; its published table
    // gives 1300-1340 for too many connections and 1350-1490, 1540-1580 for sending too much.
    signal: 'Spectrum AUP# rate code',
    reason: 'rate_limited',
    examples: [
      '550 5.1.0 <0100017-cat-000000@amazonses.com> sender rejected. Please see https://www.spectrum.net/support/internet/understanding-email-error-codes for more information. AUP#In-1310',
    ],
    terms: [[/\bAUP#(?:In?|O(?:ut)?)-1(?:3\d\d|4[0-8]\d|490|5[458]0)\b/, 'spectrum', 'rhost-spectrum']],
  }),
  rule({
    // Outlook.com / Hotmail: SC-001..SC-004 and "messages from <IP> weren't sent" refuse the
    // sending IP (SC-004: too many unwanted messages from it; S3150: it is on their block list).
    signal: 'Outlook.com IP refusal code',
    reason: 'ip_blocked',
    examples: [
      "550 SC-004 (COL0-MC1-F1) Unfortunately, messages from 192.0.2.22 weren't sent. We recommend that you contact your Internet service provider. The problem is that too many unwanted messages have been sent from the following IP address above.",
      "550 5.7.1 Unfortunately, messages from [192.0.2.1] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3150).",
    ],
    terms: [
      [/\bSC-00[1-4]\b/, 'outlookcom', 'lhost-ezweb'],
      [/messages from \[?[\d.:a-f]+\]? weren't sent/, 'outlookcom', 'lhost-ezweb'],
    ],
  }),
  rule({
    // Google Groups: "the group you tried to contact (x) may not exist, or you may not have
    // permission to post": the sender may not post; the group is not a mailbox we suppress.
    signal: 'Google Groups posting refused',
    reason: 'sender_rejected',
    examples: [
      "We're writing to let you know that the group you tried to contact (neko-nyaan) may not exist, or you may not have permission to post messages to the group. A few more details on why you weren't able to post: * You might have spelled or formatted the group name incorrectly. If you need more help or information, you can visit https://groups.google.com/support/",
    ],
    terms: [
      [/groups\.google\.com\/support/, '', 'lhost-googlegroups'],
      [/you may not have permission to post/, '', 'lhost-googlegroups'],
    ],
  }),
  rule({
    // Gmail refusing a "Send mail as" alias whose SMTP settings no longer work: the sender.
    signal: 'Gmail "Send mail as" alias refused',
    reason: 'sender_rejected',
    examples: [
      "** Message not delivered ** You're sending this from a different address or alias using the 'Send mail as' feature. The settings for your 'Send mail as' account are misconfigured or out of date. Check those settings and try resending. Learn more here: https://support.google.com/mail/?p=CustomFromDenied",
    ],
    terms: [
      [/'send mail as' (?:feature|account)/, 'gmailhelp sisimai', 'lhost-googleworkspace'],
      [/customfromdenied/, 'gmailhelp', 'lhost-googleworkspace'],
    ],
  }),
  rule({
    // fml (mailing list manager) refuses a Message-ID it has already seen: a loop.
    signal: 'fml duplicate Message-ID',
    reason: 'system_error',
    examples: ['Duplicated Message-ID in <neko@example.co.jp>.'],
    terms: [[/duplicated message-id/, 'fml', 'lhost-fml']],
  }),
  rule({
    // cPanel's Exim when no host of the domain could be reached: cPanel's fixed text.
    signal: 'cPanel: account or domain may not exist',
    reason: 'host_unknown',
    examples: [
      'The mail server could not deliver mail to kijitora@example.net. The account or domain may not exist, they may be blacklisted, or missing the proper dns entries.',
    ],
    terms: [[/the account or domain may not exist/, 'cpanel sisimai', 'lhost-exim']],
  }),
  rule({
    // Trend Micro InterScan Messaging Security: its fixed notice text.
    signal: 'Trend Micro: check the address',
    reason: 'user_unknown',
    examples: ['Unable to deliver message to <kijitora@example.jp> (and other recipients in the same domain). Please check if address is correct.'],
    terms: [[/please check if (?:the )?address is correct/, 'trendmicro', 'lhost-trendmicro']],
  }),
  rule({
    // The recipient's own settings refused the sender: Facebook, AOL, hosted filters.
    signal: "recipient's own filter",
    reason: 'content_filtered',
    examples: [
      "This message was created automatically by Facebook. Based on the email preferences of the person you're trying to email, this message could not be delivered.",
      '550 5.2.0 Message Filtered',
    ],
    terms: [
      [/email preferences of the person/, '', 'rhost-facebook'],
      [/refused due to recipient preferences/, 'sisimai', ''],
      [/recipient is only accepting mail from specific/, 'sisimai', ''],
      [/user refuses to receive|refuse to receive mail/, 'sisimai', ''],
      [/you have been blocked by the recipient/, 'sisimai', ''],
      [/message rejected due to user rules/, 'sisimai', ''],
      [/message filtered/, 'sisimai', 'lhost-receivingses'],
      [/\buser reject/, 'sisimai', ''],
      [/account is protected by/, 'sisimai', ''],
      [/has restricted sms e-?mail/, 'sisimai', ''],
    ],
  }),
  rule({
    // KDDI au (ezweb.ne.jp) answers "550 : User unknown", with the address left out, when the
    // recipient's own domain filter refuses the sender; a mailbox that does not exist gets
    // "550 <kijitora@ezweb.ne.jp>: User unknown". Relayed through Yahoo: "550: : User unknown".
    signal: 'KDDI au filter ("550 : User unknown")',
    reason: 'content_filtered',
    examples: ['550 : User unknown', '<kijitora@ezweb.ne.jp>: 550: : User unknown'],
    terms: [[/\b550:? : user unknown/, '', 'lhost-mailru lhost-office365 lhost-sendmail lhost-yahoo rfc3464 rhost-gsuite rhost-kddi']],
  }),
  rule({
    // Exchange Online directory-based edge blocking: the recipient is not in the tenant.
    signal: 'Exchange Online: recipient not in directory',
    reason: 'user_unknown',
    examples: [
      '550 5.4.1 [kijitora@example.org]: Recipient address rejected: Access denied [NEKOCHAN.cat-JPN22.prod.protection.outlook.com]',
      '550 5.4.1 Recipient address rejected: Access denied. AS(201806281) [DM6NAM12FT035.eop-nam12.prod.protection.outlook.com]',
    ],
    terms: [[/recipient address rejected: access denied/, 'microsoft sisimai', 'lhost-exim rhost-microsoft']],
  }),
  rule({
    // GoDaddy (secureserver.net) refusing a From: domain that does not resolve.
    signal: 'GoDaddy: From domain invalid',
    reason: 'sender_rejected',
    examples: ['550 5.2.0 <sironeko@example.com> From: Domain is invalid. Please provide a valid From'],
    terms: [
      [/from: domain is invalid/, 'godaddy sisimai', 'lhost-exim'],
      [/provide a valid from\b/, 'godaddy sisimai', 'lhost-exim'],
    ],
  }),
];

export const TEXT_RULES: readonly TextRule[] = [...PROVIDER_RULES, ...MAILBOX_STATE_RULES, ...REFUSAL_RULES, ...NOT_FOUND_RULES, ...TRANSIENT_RULES, ...GENERIC_RULES];
