import { describe, expect, it } from 'vitest';
import type { ParsedReport, ReportRecipient } from '../../src/bounces/index.ts';
import { planEffects, type Correlation, type PlanContext } from '../../src/inbound/plan.ts';
import type { MessageRow, RecipientRow } from '../../src/store/messages.ts';

const message = { id: 5, workspace_id: 1, stream: 'transactional', domain: 'acme.test' } as MessageRow;
const row = (id: number, address: string, over: Partial<RecipientRow> = {}) =>
  ({ id, address, message_id: 5, status: 'delivered', attempts: 1, ...over }) as RecipientRow;
const report = (over: Partial<ParsedReport>): ParsedReport => ({
  kind: 'bounce',
  recipients: [],
  feedbackType: null,
  originalMessageId: null,
  originalReturnPath: null,
  reportingMta: 'mx.example.org',
  humanText: 'Human part',
  userAgent: null,
  sourceIp: null,
  ...over,
});
const failed = (address: string, over: Partial<ReportRecipient> = {}): ReportRecipient => ({
  address,
  originalRecipient: null,
  action: 'failed',
  status: '5.1.1',
  smtpCode: 550,
  bounceType: 'permanent',
  reason: 'user_unknown',
  diagnostic: '550 5.1.1 unknown',
  response: '550 5.1.1 unknown',
  remoteMta: 'mail.example.org',
  ...over,
});
const ctx = (kind: 'verp' | 'fbl' | 'postmaster'): PlanContext => ({
  target: kind === 'verp' ? { kind, address: 'b+x@bounces.test', recipientId: 1 } : { kind, address: `${kind}@bounces.test` },
  mailFrom: '',
  remoteIp: '192.0.2.1',
  userAgent: null,
  hostname: 'mail.mailsvc.test',
});
const pinned = (r: RecipientRow): Correlation => ({ proof: 'verp', message, pinned: r, note: '' });
/** What correlate() finds by Message-ID: the only recipient, or no one of several. */
const byId = (rows: RecipientRow[]): Correlation =>
  rows.length === 1 ? { proof: 'message_id', message, pinned: rows[0]!, note: '' } : { proof: 'message_id', message, pinned: null, note: 'several recipients' };

describe('planEffects', () => {
  it('a delay is a non-final transient bounce; the provider keeps the report words and hosts', () => {
    const plan = planEffects(
      report({ recipients: [failed('a@x.org', { action: 'delayed', bounceType: 'transient', status: '4.4.1', smtpCode: null, response: 'timed out' })] }),
      pinned(row(1, 'A@x.org')),
      ctx('verp'),
    );
    expect(plan.outcome).toBe('applied');
    expect(plan.effects).toEqual([
      {
        type: 'bounce',
        recipient: row(1, 'A@x.org'),
        bounceType: 'transient',
        final: false,
        provider: { response: 'timed out', reporting_mta: 'mx.example.org', status: '4.4.1', smtp_code: null },
      },
    ]);
  });

  it('falls back to Remote-MTA when the report has no Reporting-MTA', () => {
    const plan = planEffects(report({ reportingMta: null, recipients: [failed('a@x.org')] }), pinned(row(1, 'a@x.org')), ctx('verp'));
    expect(plan.effects[0]!.provider.reporting_mta).toBe('mail.example.org');
  });

  it('a complaint naming nobody acts only on a pinned row or a one-recipient message', () => {
    const abuse = report({ kind: 'complaint', feedbackType: 'abuse' });
    expect(planEffects(abuse, pinned(row(1, 'a@x.org')), ctx('fbl')).effects).toHaveLength(1);
    expect(planEffects(abuse, byId([row(1, 'a@x.org')]), ctx('fbl')).effects).toHaveLength(1);
    expect(planEffects(abuse, byId([row(1, 'a@x.org'), row(2, 'b@x.org')]), ctx('fbl')).outcome).toBe('no_effect');
  });

  it('stores not-spam and unknown feedback types, postmaster mail and uncorrelated reports without effect', () => {
    const named = [failed('a@x.org')];
    expect(planEffects(report({ kind: 'complaint', feedbackType: 'not-spam', recipients: named }), byId([row(1, 'a@x.org')]), ctx('fbl')).outcome).toBe('no_effect');
    expect(planEffects(report({ kind: 'complaint', feedbackType: 'dkim', recipients: named }), byId([row(1, 'a@x.org')]), ctx('fbl')).outcome).toBe('no_effect');
    expect(planEffects(report({ recipients: named }), byId([row(1, 'a@x.org')]), ctx('postmaster')).outcome).toBe('no_effect');
    expect(planEffects(report({ recipients: named }), { proof: null, message: null, pinned: null, note: 'not ours' }, ctx('fbl'))).toEqual({
      outcome: 'uncorrelated',
      effects: [],
      summary: 'not ours',
    });
  });

  it('one effect for the pinned row even when a report lists it twice; other named addresses get none', () => {
    const plan = planEffects(report({ recipients: [failed('a@x.org'), failed('A@X.ORG'), failed('b@x.org')] }), pinned(row(1, 'a@x.org')), ctx('fbl'));
    expect(plan.effects.map((e) => e.recipient.id)).toEqual([1]);
  });

  it('a Message-ID of a message with several recipients proves none of them: a bounce naming them changes nothing', () => {
    const plan = planEffects(report({ recipients: [failed('a@x.org'), failed('b@x.org')] }), byId([row(1, 'a@x.org'), row(2, 'b@x.org'), row(3, 'c@x.org')]), ctx('fbl'));
    expect(plan).toEqual({ outcome: 'no_effect', effects: [], summary: 'several recipients' });
  });

  it('never acts on a recipient that was not attempted yet, whatever the proof', () => {
    const bounce = report({ recipients: [failed('a@x.org')] });
    for (const status of ['queued', 'scheduled', 'suppressed', 'canceled'] as const) {
      const plan = planEffects(bounce, pinned(row(1, 'a@x.org', { status, attempts: 0 })), ctx('verp'));
      expect(plan.outcome).toBe('no_effect');
      expect(plan.summary).toMatch(/never attempted/);
    }
    // Deferred once and queued again for its next try: it was attempted.
    expect(planEffects(bounce, pinned(row(1, 'a@x.org', { status: 'queued', attempts: 1 })), ctx('verp')).outcome).toBe('applied');
    expect(planEffects(bounce, pinned(row(1, 'a@x.org', { status: 'deferred', attempts: 1 })), ctx('verp')).outcome).toBe('applied');
  });
});
