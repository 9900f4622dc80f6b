// The built-in provider rules (SPEC §11): which MX host names make one destination group, and the
// limits that group starts from. Configured rules (`shaping.providers`) are tried before these.
//
// A number is either published by the provider, shipped by a well-known MTA's shaping defaults
// (KumoMTA's files, where deliverability engineers keep what the providers tolerate), or a
// conservative choice of ours; each `source` says which. `perMinute: null` is deliberate: no
// provider here publishes a rate, so their groups are not capped by `shaping.defaults.perMinute`
// (which protects small MX hosts); reply rules (reply-rules.ts) slow a group when it asks.
// docs/SHAPING.md shows this table; test/shaping/doc.test.ts keeps the two in step.

import type { BuiltInProvider } from './types.ts';

const KUMO = "KumoMTA's shipped shaping defaults, assets/policy-extras/shaping.toml (github.com/KumoCorp/kumomta)";
const KUMO_COMMUNITY = "KumoMTA's community shaping file, assets/community/shaping.toml (github.com/KumoCorp/kumomta; contributed rules, shipped as-is)";
const OURS = 'a conservative choice of ours';

export const BUILT_IN_PROVIDERS: readonly BuiltInProvider[] = [
  {
    // Gmail and Google Workspace: gmail-smtp-in.l.google.com, aspmx.l.google.com and its alt1-4,
    // aspmx2-5.googlemail.com, and smtp.google.com (the one MX new Workspace domains are given).
    // Both kinds of domain reach the same servers, so they share one group.
    name: 'google',
    mx: ['google.com', 'googlemail.com'],
    connections: 5,
    perMinute: null,
    perConnection: 50,
    source:
      `${KUMO}, [provider."google"]: provider_connection_limit = 5, max_deliveries_per_connection = 50. ` +
      "Google's sender guidelines (support.google.com/mail/answer/81126) give no connection or rate numbers.",
  },
  {
    // Microsoft 365 (Exchange Online Protection): every tenant domain has an MX host of its own,
    // contoso-com.mail.protection.outlook.com, or with DNSSEC contoso-com.o-v1.mx.microsoft; all of
    // them are one service.
    name: 'microsoft',
    mx: ['mail.protection.outlook.com', 'mx.microsoft'],
    connections: 5,
    perMinute: null,
    perConnection: 50,
    source:
      `${KUMO}, [provider."office365"] and [provider."office365-dane"]: provider_connection_limit = 5, ` +
      'max_deliveries_per_connection = 50. We found no inbound numbers published by Microsoft.',
  },
  {
    // Outlook.com, Hotmail, Live and MSN: hotmail-com.olc.protection.outlook.com and the like, and
    // the older mxN.hotmail.com hosts. KumoMTA keeps these apart from Microsoft 365: separate edge
    // servers, so a block here says nothing about business tenants.
    name: 'outlook',
    mx: ['olc.protection.outlook.com', 'hotmail.com'],
    connections: 5,
    perMinute: null,
    perConnection: 50,
    source:
      `${KUMO}, [provider."outlook"]: provider_connection_limit = 5, max_deliveries_per_connection = 50 ` +
      '(it cites the Outlook.com postmaster policies, sendersupport.olc.protection.outlook.com/pm/policies.aspx).',
  },
  {
    // Yahoo and AOL, with the brands on their platform: mta5-7.am0.yahoodns.net (yahoo.com),
    // mx-aol.mail.gm0.yahoodns.net (aol.com); mailin-0N.mx.aol.com is AOL's older MX.
    name: 'yahoo',
    mx: ['yahoodns.net', 'mx.aol.com'],
    connections: 10,
    perMinute: null,
    perConnection: 20,
    source:
      'Yahoo, "Guidelines for establishing SMTP connections to Yahoo Mail" (help.yahoo.com/kb/SLN3433.html): at most 20 ' +
      'messages per connection, after which the server closes it; it publishes no number of concurrent connections, so ' +
      `10 is ${OURS} (KumoMTA's default connection_limit; its [provider."yahoo"] also sets 20 per connection).`,
  },
  {
    // iCloud Mail, also for me.com and mac.com addresses: mx01.mail.icloud.com, mx02.mail.icloud.com.
    name: 'apple',
    mx: ['icloud.com', 'me.com'],
    connections: 10,
    perMinute: null,
    perConnection: 5,
    source:
      `${KUMO}, [provider."apple"]: provider_connection_limit = 10, max_deliveries_per_connection = 5 ` +
      "(it cites Apple's postmaster information for iCloud Mail, support.apple.com/en-us/102322).",
  },
  {
    // Proton Mail, also for custom domains: mail.protonmail.ch, mailsec.protonmail.ch.
    name: 'proton',
    mx: ['protonmail.ch'],
    connections: 5,
    perMinute: null,
    source: `We found no limits published by Proton; 5 connections is ${OURS}, since every domain hosted at Proton shares this one group.`,
  },
  {
    // GMX and WEB.DE: mx00.emig.gmx.net, mx01.emig.gmx.net (gmx.de, gmx.net), mx-ha02.web.de,
    // mx-ha03.web.de (web.de). The same company's hosting MX (mx00.ionos.de, mx00.kundenserver.de,
    // mx00.1and1.com) runs the same software but is another fleet with other customers: not here.
    name: 'gmx',
    mx: ['gmx.net', 'web.de'],
    connections: 4,
    perMinute: null,
    perConnection: 20,
    source:
      `${KUMO_COMMUNITY}, [provider."gmx.net_web.de"]: connection_limit = 4, max_deliveries_per_connection = 20. ` +
      'WEB.DE\'s postmaster page (postmaster.web.de/error-messages) gives no numbers, only "Too many messages have been ' +
      'received in a short period of time. Please try again in a few hours and reduce the sending rate."',
  },
  {
    // Mail.ru: mxs.mail.ru (mail.ru, inbox.ru, bk.ru, list.ru), emx.mail.ru (domains hosted there).
    name: 'mailru',
    mx: ['mail.ru'],
    connections: 5,
    perMinute: null,
    source: `We found no limits published by Mail.ru; 5 connections is ${OURS}, since every domain hosted at Mail.ru shares this one group.`,
  },
  {
    // Yandex: mx.yandex.ru (yandex.ru), mx.yandex.net (Yandex 360 domains).
    name: 'yandex',
    mx: ['yandex.ru', 'yandex.net'],
    connections: 5,
    perMinute: null,
    source: `We found no limits published by Yandex; 5 connections is ${OURS}, since every domain hosted at Yandex shares this one group.`,
  },
];
