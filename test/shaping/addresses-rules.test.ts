import { describe, expect, it } from 'vitest';
import { isBlocklistReply } from '../../src/shaping/blocklists.ts';
import { warmupAllowance } from '../../src/shaping/warmup.ts';

describe('warm-up allowances', () => {
  const plan = { start: '2026-12-01', schedule: [50, 100, 200] };
  const at = (iso: string) => Date.parse(iso);

  it('gives day k after start its number, the last repeating, and nothing before start', () => {
    expect(warmupAllowance(plan, at('2026-11-30T23:59:59.999Z'))).toBe(0);
    expect(warmupAllowance(plan, at('2026-12-01T00:00:00.000Z'))).toBe(50);
    expect(warmupAllowance(plan, at('2026-12-01T23:59:59.999Z'))).toBe(50);
    expect(warmupAllowance(plan, at('2026-12-02T00:00:00.000Z'))).toBe(100);
    expect(warmupAllowance(plan, at('2026-12-03T12:00:00.000Z'))).toBe(200);
    expect(warmupAllowance(plan, at('2027-06-01T12:00:00.000Z'))).toBe(200);
  });
});

describe('blocklist replies', () => {
  it('recognises replies that name the sending address as listed', () => {
    for (const reply of [
      '554 5.7.1 Service unavailable; Client host [192.0.2.10] blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/192.0.2.10',
      '550 5.7.1 Mail from 192.0.2.10 refused, see http://www.barracudanetworks.com/reputation/?pr=1&ip=192.0.2.10 (BarracudaCentral)',
      '550 5.7.1 Rejected: 192.0.2.10 listed at bl.spamcop.net',
      '550 5.7.606 Access denied, banned sending IP [192.0.2.10]. Your IP is on our block list (S3150)',
      '421 4.7.1 Your IP is blacklisted, try later',
    ]) {
      expect(isBlocklistReply(reply), reply).toBe(true);
    }
  });

  it('leaves replies about the recipient or the message alone', () => {
    for (const reply of [
      '550 5.1.1 The email account that you tried to reach does not exist',
      '452 4.2.2 Mailbox full',
      '250 2.0.0 OK queued',
      '421 4.7.28 Unusual rate of unsolicited mail',
    ]) {
      expect(isBlocklistReply(reply), reply).toBe(false);
    }
  });

  it('reads at most 512 characters of a reply', () => {
    expect(isBlocklistReply(`550 5.7.1 ${'x'.repeat(600)} spamhaus`)).toBe(false);
  });
});
