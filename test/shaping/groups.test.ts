import { describe, expect, it } from 'vitest';
import { groupOf, limitsOf } from '../../src/shaping/groups.ts';
import { BUILT_IN_PROVIDERS } from '../../src/shaping/providers.ts';
import type { ProviderRule, ShapingLimits } from '../../src/shaping/types.ts';

// MX hosts as the providers publish them, most preferred first, each with the group it must give.
const REAL_MX: readonly [string, string[], string][] = [
  ['gmail.com', ['gmail-smtp-in.l.google.com.', 'alt1.gmail-smtp-in.l.google.com.', 'alt2.gmail-smtp-in.l.google.com.'], 'provider:google'],
  [
    'a Workspace domain',
    ['aspmx.l.google.com', 'alt1.aspmx.l.google.com', 'alt2.aspmx.l.google.com', 'aspmx2.googlemail.com', 'aspmx3.googlemail.com'],
    'provider:google',
  ],
  ['a new Workspace domain', ['smtp.google.com'], 'provider:google'],
  ['a Microsoft 365 tenant', ['contoso-com.mail.protection.outlook.com'], 'provider:microsoft'],
  ['a Microsoft 365 tenant with DNSSEC', ['contoso-com.o-v1.mx.microsoft.'], 'provider:microsoft'],
  ['outlook.com', ['outlook-com.olc.protection.outlook.com'], 'provider:outlook'],
  ['hotmail.com', ['hotmail-com.olc.protection.outlook.com'], 'provider:outlook'],
  ['hotmail.com, older MX', ['mx1.hotmail.com', 'mx2.hotmail.com', 'mx3.hotmail.com', 'mx4.hotmail.com'], 'provider:outlook'],
  ['yahoo.com', ['mta5.am0.yahoodns.net', 'mta6.am0.yahoodns.net', 'mta7.am0.yahoodns.net'], 'provider:yahoo'],
  ['aol.com', ['mx-aol.mail.gm0.yahoodns.net'], 'provider:yahoo'],
  ['aol.com, older MX', ['mailin-01.mx.aol.com', 'mailin-02.mx.aol.com'], 'provider:yahoo'],
  ['icloud.com', ['mx01.mail.icloud.com', 'mx02.mail.icloud.com'], 'provider:apple'],
  ['me.com, an older Apple host', ['mx1-smtpin001.me.com'], 'provider:apple'],
  ['proton.me', ['mail.protonmail.ch', 'mailsec.protonmail.ch'], 'provider:proton'],
  ['gmx.de', ['mx00.emig.gmx.net', 'mx01.emig.gmx.net'], 'provider:gmx'],
  ['web.de', ['mx-ha03.web.de', 'mx-ha02.web.de'], 'provider:gmx'],
  ['mail.ru', ['mxs.mail.ru'], 'provider:mailru'],
  ['a domain hosted at Mail.ru', ['emx.mail.ru'], 'provider:mailru'],
  ['yandex.ru', ['mx.yandex.ru'], 'provider:yandex'],
  ['a Yandex 360 domain', ['mx.yandex.net'], 'provider:yandex'],
];

const DEFAULTS: ShapingLimits = { connections: 10, perMinute: null, perConnection: 100 };

describe('groupOf with the built-in providers', () => {
  it.each(REAL_MX)('%s → %s', (_domain, mx, group) => {
    expect(groupOf(mx, BUILT_IN_PROVIDERS)).toBe(group);
  });

  it('every built-in provider is reached by a real MX host', () => {
    const reached = new Set(REAL_MX.map(([, , group]) => group));
    expect(BUILT_IN_PROVIDERS.map((p) => `provider:${p.name}`).filter((g) => !reached.has(g))).toStrictEqual([]);
  });

  it('any other domain is grouped by its first MX host, lowercased and without the trailing dot', () => {
    expect(groupOf(['MX1.Example.NET.', 'mx2.example.net.'], BUILT_IN_PROVIDERS)).toBe('mx:mx1.example.net');
    expect(groupOf(['mail.example.org'], BUILT_IN_PROVIDERS)).toBe('mx:mail.example.org');
  });

  it('matches suffixes on label boundaries only', () => {
    expect(groupOf(['mx.notgoogle.com'], BUILT_IN_PROVIDERS)).toBe('mx:mx.notgoogle.com');
    expect(groupOf(['aspmx.l.google.com.evil.example'], BUILT_IN_PROVIDERS)).toBe('mx:aspmx.l.google.com.evil.example');
    expect(groupOf(['mail.mymail.ru'], BUILT_IN_PROVIDERS)).toBe('mx:mail.mymail.ru');
  });

  it('is decided by the first MX host a rule claims: a Workspace domain with a backup MX of its own is Google', () => {
    expect(groupOf(['aspmx.l.google.com', 'backup.example.com'], BUILT_IN_PROVIDERS)).toBe('provider:google');
    expect(groupOf(['mx.example.com', 'aspmx.l.google.com'], BUILT_IN_PROVIDERS)).toBe('provider:google');
    expect(groupOf(['mx01.mail.icloud.com', 'aspmx.l.google.com'], BUILT_IN_PROVIDERS)).toBe('provider:apple');
  });

  it('refuses an empty MX list (the implicit MX is the domain itself)', () => {
    expect(() => groupOf([], BUILT_IN_PROVIDERS)).toThrow(RangeError);
  });
});

describe('groupOf with configured rules first', () => {
  it('a configured rule wins over a built-in claiming the same host', () => {
    const workspace: ProviderRule = { name: 'workspace', mx: ['aspmx.l.google.com'] };
    expect(groupOf(['aspmx.l.google.com'], [workspace, ...BUILT_IN_PROVIDERS])).toBe('provider:workspace');
    expect(groupOf(['gmail-smtp-in.l.google.com'], [workspace, ...BUILT_IN_PROVIDERS])).toBe('provider:google');
  });

  it('a configured rule groups hosts no built-in knows, with suffixes written with dots or capitals', () => {
    const fastmail: ProviderRule = { name: 'fastmail', mx: ['.MessagingEngine.com.'] };
    expect(groupOf(['in1-smtp.messagingengine.com', 'in2-smtp.messagingengine.com'], [fastmail, ...BUILT_IN_PROVIDERS])).toBe('provider:fastmail');
  });

  it('host order still decides before rule order', () => {
    const backup: ProviderRule = { name: 'backup', mx: ['backup.example.com'] };
    expect(groupOf(['aspmx.l.google.com', 'backup.example.com'], [backup, ...BUILT_IN_PROVIDERS])).toBe('provider:google');
  });
});

describe('limitsOf', () => {
  it('a built-in provider group takes its numbers, the defaults fill what it leaves out', () => {
    expect(limitsOf('provider:google', DEFAULTS, BUILT_IN_PROVIDERS)).toStrictEqual({ connections: 5, perMinute: null, perConnection: 50 });
    expect(limitsOf('provider:yahoo', DEFAULTS, BUILT_IN_PROVIDERS)).toStrictEqual({ connections: 10, perMinute: null, perConnection: 20 });
    expect(limitsOf('provider:proton', DEFAULTS, BUILT_IN_PROVIDERS)).toStrictEqual({ connections: 5, perMinute: null, perConnection: 100 });
  });

  it('perMinute: null is given, so it wins over a default rate; a left-out perMinute takes the default', () => {
    const rated: ShapingLimits = { connections: 10, perMinute: 600, perConnection: 100 };
    expect(limitsOf('provider:google', rated, BUILT_IN_PROVIDERS).perMinute).toBeNull();
    expect(limitsOf('provider:x', rated, [{ name: 'x', mx: ['x.example'], connections: 2 }])).toStrictEqual({ connections: 2, perMinute: 600, perConnection: 100 });
  });

  it('a configured rule of a built-in name overrides only the numbers it gives', () => {
    const providers = [{ name: 'google', mx: ['google.com'], connections: 20 }, ...BUILT_IN_PROVIDERS];
    expect(limitsOf('provider:google', DEFAULTS, providers)).toStrictEqual({ connections: 20, perMinute: null, perConnection: 50 });
  });

  it('mx: groups, unknown providers and anything else take the defaults, as a copy', () => {
    for (const group of ['mx:mail.example.org', 'provider:gone', 'google']) {
      const limits = limitsOf(group, DEFAULTS, BUILT_IN_PROVIDERS);
      expect(limits).toStrictEqual(DEFAULTS);
      expect(limits).not.toBe(DEFAULTS);
    }
  });
});

describe('the built-in provider data', () => {
  it('has unique names the config would accept, clean suffixes, and a source and connections for each', () => {
    const names = BUILT_IN_PROVIDERS.map((p) => p.name);
    expect(new Set(names).size).toBe(names.length);
    for (const p of BUILT_IN_PROVIDERS) {
      expect(p.name).toMatch(/^[a-z0-9][a-z0-9._-]*$/);
      for (const suffix of p.mx) expect(suffix).toMatch(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/);
      expect(p.connections).toBeGreaterThanOrEqual(1);
      expect(p.perMinute === null || (p.perMinute ?? 0) >= 1).toBe(true);
      expect(p.source.length).toBeGreaterThan(40);
    }
  });

  it('no two built-in providers claim the same host', () => {
    const suffixes = BUILT_IN_PROVIDERS.flatMap((p) => p.mx.map((s) => [p.name, s] as const));
    for (const [name, suffix] of suffixes) {
      const others = BUILT_IN_PROVIDERS.filter((p) => p.name !== name);
      expect(groupOf([`mx.${suffix}`], others)).toBe(`mx:mx.${suffix}`);
    }
  });
});
