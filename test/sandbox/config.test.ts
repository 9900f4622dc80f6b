import { expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.ts';

it('delivery.mode is live by default, sandbox on request, and a misspelt mode is named with its choices', () => {
  expect(loadConfig({ env: {} }).delivery.mode).toBe('live');
  expect(loadConfig({ env: { MAILSVC_DELIVERY_MODE: 'sandbox' } }).delivery.mode).toBe('sandbox');
  let error: unknown;
  try {
    loadConfig({ env: { MAILSVC_DELIVERY_MODE: 'sandbx' } });
  } catch (err) {
    error = err;
  }
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as ConfigError).problems.join('\n')).toMatch(/delivery\.mode.*MAILSVC_DELIVERY_MODE.*"live", "sandbox".*sandbx/);
});
