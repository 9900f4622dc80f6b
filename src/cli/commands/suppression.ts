import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { emit, printLines, printTable } from '../output.ts';

export function registerSuppressionCommands(program: Command, ctx: CliContext): void {
  const cmd = program.command('suppression').description('per-stream suppression lists');
  const csv = () => import('../../suppression/csv.ts');
  const service = () => import('../../suppression/service.ts');
  const workspaceId = async (name: string) => (await (await ctx.open()).tenancy.workspaceByName(name)).id;

  cmd
    .command('list')
    .requiredOption('--workspace <name>', 'workspace name')
    .option('--stream <stream>', 'transactional or broadcast')
    .option('--json', 'print JSON')
    .action(async (opts: { workspace: string; stream?: string; json?: boolean }) => {
      const { suppressions } = await ctx.open();
      const { suppressionView } = await service();
      const rows = (await suppressions.all(await workspaceId(opts.workspace), opts.stream)).map(suppressionView);
      emit(opts.json, rows, () => printTable(rows, ['address', 'stream', 'reason', 'email_id', 'created_at']));
    });

  cmd
    .command('add <address>')
    .requiredOption('--workspace <name>', 'workspace name')
    .requiredOption('--stream <stream>', 'transactional or broadcast')
    .option('--json', 'print JSON')
    .action(async (address: string, opts: { workspace: string; stream: string; json?: boolean }) => {
      const { suppressions } = await ctx.open();
      const { suppressionView } = await service();
      const { row, created } = await suppressions.add(await workspaceId(opts.workspace), { address, stream: opts.stream, reason: 'manual' });
      emit(opts.json, { ...suppressionView(row), created }, () =>
        printLines([created ? `${row.address} suppressed on ${row.stream}.` : `${row.address} was already suppressed on ${row.stream} (${row.reason}).`]),
      );
    });

  cmd
    .command('remove <address>')
    .requiredOption('--workspace <name>', 'workspace name')
    .requiredOption('--stream <stream>', 'transactional or broadcast')
    .option('--json', 'print JSON')
    .action(async (address: string, opts: { workspace: string; stream: string; json?: boolean }) => {
      const { suppressions } = await ctx.open();
      await suppressions.remove(await workspaceId(opts.workspace), opts.stream, address);
      emit(opts.json, { address: address.toLowerCase(), stream: opts.stream, deleted: true }, () => printLines([`${address} removed from ${opts.stream}.`]));
    });

  cmd
    .command('export')
    .description('write the list as CSV (address,stream,reason,email_id,created_at)')
    .requiredOption('--workspace <name>', 'workspace name')
    .option('--stream <stream>', 'only this stream')
    .option('--output <file>', 'write to a file instead of stdout')
    .action(async (opts: { workspace: string; stream?: string; output?: string }) => {
      const { suppressions } = await ctx.open();
      const { toCsv } = await csv();
      const text = toCsv(await suppressions.all(await workspaceId(opts.workspace), opts.stream));
      if (opts.output) writeFileSync(opts.output, text);
      else process.stdout.write(text);
    });

  cmd
    .command('import <file>')
    .description('read a CSV with a header row (address[,stream][,reason]); bad lines are reported and skipped')
    .requiredOption('--workspace <name>', 'workspace name')
    .option('--stream <stream>', 'stream for rows without one')
    .option('--json', 'print JSON')
    .action(async (file: string, opts: { workspace: string; stream?: string; json?: boolean }) => {
      const { suppressions } = await ctx.open();
      const wsId = await workspaceId(opts.workspace);
      const [{ readSuppressionCsv }, { checkStream }] = await Promise.all([csv(), service()]);
      const { entries, problems } = readSuppressionCsv(readFileSync(file, 'utf8'), opts.stream ? checkStream(opts.stream) : undefined);
      const added = await suppressions.addMany(wsId, entries);
      for (const p of problems) process.stderr.write(`${file}:${p.line}: ${p.error}\n`);
      const summary = { read: entries.length + problems.length, imported: added, already_present: entries.length - added, errors: problems };
      emit(opts.json, summary, () =>
        printLines([`Imported ${added} entries (${entries.length - added} already present, ${problems.length} bad lines).`]),
      );
    });
}
