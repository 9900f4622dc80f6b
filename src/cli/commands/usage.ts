import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { emit, printLines, printTable } from '../output.ts';

export function registerUsageCommand(program: Command, ctx: CliContext): void {
  program
    .command('usage')
    .description('billable recipients per day and stream')
    .option('--workspace <name>', 'workspace name (default: the only one)')
    .option('--from <day>', 'first day, YYYY-MM-DD (default: 30 days back)')
    .option('--to <day>', 'last day, YYYY-MM-DD (default: today)')
    .option('--json', 'print JSON')
    .action(async (opts: { workspace?: string; from?: string; to?: string; json?: boolean }) => {
      const { usage } = await ctx.open();
      const report = await usage.report((await ctx.workspace(opts.workspace)).id, opts);
      emit(opts.json, report, () => {
        printTable(report.data as unknown as Record<string, unknown>[], ['day', 'stream', 'count']);
        printLines([`Total ${report.from}..${report.to}: transactional ${report.totals.transactional}, broadcast ${report.totals.broadcast}`]);
      });
    });
}
