import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.ts';

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('compliance settings', () => {
  it('hold broadcast mail at a 0.3% complaint rate over 1000 delivered by default, and take null to turn it off', () => {
    expect(loadConfig({ env: {} }).compliance).toStrictEqual({ pauseBroadcastAt: 0.3, pauseMinDelivered: 1000 });
    expect(loadConfig({ env: {}, overrides: { compliance: { pauseBroadcastAt: null } } }).compliance.pauseBroadcastAt).toBeNull();
    expect(loadConfig({ env: { MAILSVC_COMPLIANCE_PAUSE_BROADCAST_AT: '0.5' } }).compliance.pauseBroadcastAt).toBe(0.5);
  });

  it('refuse a rate that is not a percentage above 0, and a minimum below 1, at start', () => {
    for (const bad of [0, -1, 101, '0.3%']) {
      const found = problems(() => loadConfig({ env: {}, overrides: { compliance: { pauseBroadcastAt: bad } } }));
      expect(found.join('\n'), String(bad)).toMatch(/compliance\.pauseBroadcastAt/);
    }
    expect(problems(() => loadConfig({ env: {}, overrides: { compliance: { pauseMinDelivered: 0 } } })).join('\n')).toMatch(/compliance\.pauseMinDelivered/);
  });
});
