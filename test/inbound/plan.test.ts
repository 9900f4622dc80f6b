import { describe, expect, it } from 'vitest';
import type { ParsedReport, ReportRecipient } from '../../src/bounces/index.ts';
import { planEffects, type Correlation, type PlanContext } from '../../src/inbound/plan.ts';
import type { MessageRow, RecipientRow } from '../../src/store/messages.ts';

const message = { id: 5, workspace_id: 1, stream: 'transactional', domain: 'acme.test' } as MessageRow;
const row = (id: number, address: string) => ({ id, address, message_id: 5 }) as RecipientRow;
const report = (over: Partial<ParsedReport>): ParsedReport => ({
  kind: 'bounce', recipients: [], feedbackType: null, originalMessageId: null, originalReturnPath: null,
  reportingMta: 'mx.example.org', humanText: 'Human part', userAgent: null, sourceIp: null, ...over,
});
const failed = (address: string, over: Partial<ReportRecipient> = {}): ReportRecipient => ({
  address, originalRecipient: null, action: 'failed', status: '5.1.1', smtpCode: 550, bounceType: 'permanent',
  reason: 'user_unknown', diagnostic: '550 5.1.1 unknown', response: '550 5.1.1 unknown', remoteMta: 'mail.example.org', ...over,
});
const ctx = (kind: 'verp' | 'fbl' | 'postmaster'): PlanContext => ({
  target: kind === 'verp' ? { kind, address: 'b+x@bounces.test', recipientId: 1 } : { kind, address: `${kind}@bounces.test` },
  mailFrom: '', remoteIp: '192.0.2.1', userAgent: null, hostname: 'mail.mailsvc.test',
});
const pinned = (r: RecipientRow): Correlation => ({ proof: 'verp', message, pinned: r, recipients: [], note: '' });
const byId = (rows: RecipientRow[]): Correlation => ({ proof: 'message_id', message, pinned: null, recipients: rows, note: '' });

describe('planEffects', () => {
  it('a delay is a non-final transient bounce; the provider keeps the report words and hosts', () => {
    const plan = planEffects(report({ recipients: [failed('a@x.org', { action: 'delayed', bounceType: 'transient', status: '4.4.1', smtpCode: null, response: 'timed out' })] }), pinned(row(1, 'A@x.org')), ctx('verp'));
    expect(plan.outcome).toBe('applied');
    expect(plan.effects).toEqual([
      { type: 'bounce', recipient: row(1, 'A@x.org'), bounceType: 'transient', final: false, provider: { response: 'timed out', reporting_mta: 'mx.example.org', status: '4.4.1', smtp_code: null } },
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
    expect(planEffects(report({ recipients: named }), { proof: null, message: null, pinned: null, recipients: [], note: 'not ours' }, ctx('fbl'))).toEqual({ outcome: 'uncorrelated', effects: [], summary: 'not ours' });
  });

  it('one effect per recipient row even when a report lists it twice', () => {
    const plan = planEffects(report({ recipients: [failed('a@x.org'), failed('A@X.ORG'), failed('b@x.org')] }), byId([row(1, 'a@x.org'), row(2, 'b@x.org')]), ctx('fbl'));
    expect(plan.effects.map((e) => e.recipient.id)).toEqual([1, 2]);
  });
});
