import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { RawSmtp } from '../inbound/smtp-client.ts';
import { submissionEnv } from './env.ts';

describe.each(STORES)('SMTP submission greeting (%s)', (kind) => {
  it('greets at once, so a one-message session is not held back before its first command', async () => {
    const env = await submissionEnv(kind);
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const smtp = await RawSmtp.connect(env.ports.submission);
      times.push(performance.now() - started);
      expect(smtp.greeting.code).toBe(220);
      expect((await smtp.command('EHLO client.test')).code).toBe(250);
      await smtp.quit();
    }
    // smtp-server's own connection handling waits 100 ms before every greeting.
    expect(Math.min(...times)).toBeLessThan(50);
    expect(times.filter((t) => t >= 100).length).toBeLessThan(times.length);
  });
});
