import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { positiveInt } from '../context.ts';
import { emit, printLines, printTable, wrap } from '../output.ts';

const MARK = { ok: 'ok', problem: 'PROBLEM', skipped: 'skipped' } as const;

export function registerDoctorCommand(program: Command, ctx: CliContext): void {
  program
    .command('doctor')
    .description(
      'check a production setup (hostname and its A/PTR records, each source address’s PTR against its EHLO name, outbound port 25, each domain’s DNS records and pool, TLS certificate, database, clock) and say what to fix; exits 1 on a problem',
    )
    .option('--probe-domain <domain>', 'connect to the MX of this domain to test outbound SMTP', 'gmail.com')
    .option('--clock-url <url>', 'compare the clock with the Date header of this URL', 'https://www.google.com/')
    .option('--no-clock', 'skip the clock comparison')
    .option('--timeout <seconds>', 'give up on each network check after this many seconds', positiveInt, 5)
    .option('--json', 'print JSON')
    .action(async (opts: { probeDomain: string; clockUrl: string; clock: boolean; timeout: number; json?: boolean }) => {
      const config = await ctx.config();
      const { runDoctor } = await import('../../doctor/index.ts');
      const findings = await runDoctor(config, {
        probeDomain: opts.probeDomain,
        clockUrl: opts.clock ? opts.clockUrl : null,
        timeoutMs: opts.timeout * 1000,
        now: Date.now,
      });
      const problems = findings.filter((f) => f.status === 'problem');
      emit(opts.json, { ok: problems.length === 0, checks: findings }, () => {
        printTable(
          findings.map((f) => ({ ...f, status: MARK[f.status] })),
          ['status', 'check', 'detail'],
          { wrap: ['detail'] },
        );
        if (problems.length > 0) printLines(['', 'To fix:', ...problems.flatMap((f) => wrap(`  - ${f.check}: ${f.fix}`, '    '))]);
      });
      if (problems.length > 0) throw new Error(`${problems.length} problem(s): ${problems.map((f) => f.check).join(', ')}`);
    });
}
