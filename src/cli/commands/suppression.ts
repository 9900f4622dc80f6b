import { createWriteStream, readFileSync } from 'node:fs';
import { once } from 'node:events';
import type { Command } from 'commander';
import { ServiceError } from '../../core/errors.ts';
import type { CliContext } from '../context.ts';
import { emit, printLines, printTable } from '../output.ts';

/** The stream `add` and `remove` act on without --stream: the one messages default to. */
const DEFAULT_STREAM = 'transactional';
const WORKSPACE_HELP = 'workspace name (default: the only one)';

export function registerSuppressionCommands(program: Command, ctx: CliContext): void {
  const cmd = program.command('suppression').description('per-stream suppression lists: addresses no mail is sent to');
  const csv = () => import('../../suppression/csv.ts');
  const service = () => import('../../suppression/service.ts');
  const workspaceId = async (name: string | undefined) => (await ctx.workspace(name)).id;

  cmd
    .command('list')
    .description('suppressed addresses, with the reason and the message that caused each')
    .option('--workspace <name>', WORKSPACE_HELP)
    .option('--stream <stream>', 'only this stream: transactional or broadcast (default: both)')
    .option('--json', 'print JSON')
    .action(async (opts: { workspace?: string; stream?: string; json?: boolean }) => {
      const { suppressions } = await ctx.open();
      const { suppressionView } = await service();
      const rows = (await suppressions.all(await workspaceId(opts.workspace), opts.stream)).map(suppressionView);
      emit(opts.json, rows, () => printTable(rows, ['address', 'stream', 'reason', 'email_id', 'created_at']));
    });

  cmd
    .command('add <address>')
    .description('suppress an address on one stream (reason manual)')
    .option('--workspace <name>', WORKSPACE_HELP)
    .option('--stream <stream>', `transactional or broadcast (default: ${DEFAULT_STREAM})`, DEFAULT_STREAM)
    .option('--json', 'print JSON')
    .action(async (address: string, opts: { workspace?: string; stream: string; json?: boolean }) => {
      const { suppressions } = await ctx.open();
      const { suppressionView } = await service();
      const { row, created } = await suppressions.add(await workspaceId(opts.workspace), { address, stream: opts.stream, reason: 'manual' });
      emit(opts.json, { ...suppressionView(row), created }, () =>
        printLines([created ? `${row.address} suppressed on ${row.stream}.` : `${row.address} was already suppressed on ${row.stream} (${row.reason}).`]),
      );
    });

  cmd
    .command('remove <address>')
    .description('take an address off one stream’s list, so mail to it is sent again')
    .option('--workspace <name>', WORKSPACE_HELP)
    .option('--stream <stream>', `transactional or broadcast (default: ${DEFAULT_STREAM})`, DEFAULT_STREAM)
    .option('--json', 'print JSON')
    .action(async (address: string, opts: { workspace?: string; stream: string; json?: boolean }) => {
      const { suppressions } = await ctx.open();
      const wsId = await workspaceId(opts.workspace);
      try {
        await suppressions.remove(wsId, opts.stream, address);
      } catch (err) {
        if (err instanceof ServiceError && err.code === 'NOT_FOUND') throw new Error(`${address} is not suppressed on ${opts.stream}`, { cause: err });
        throw err;
      }
      emit(opts.json, { address: address.toLowerCase(), stream: opts.stream, deleted: true }, () => printLines([`${address} removed from ${opts.stream}.`]));
    });

  cmd
    .command('export')
    .description('write the list as CSV (address,stream,reason,email_id,created_at)')
    .option('--workspace <name>', WORKSPACE_HELP)
    .option('--stream <stream>', 'only this stream (default: both)')
    .option('--output <file>', 'write to a file instead of stdout')
    .action(async (opts: { workspace?: string; stream?: string; output?: string }) => {
      const { suppressions } = await ctx.open();
      const { csvOfPages } = await csv();
      const pages = suppressions.exportPages(await workspaceId(opts.workspace), { stream: opts.stream });
      // Page by page, waiting for the output to drain: the list is never held whole.
      const out = opts.output ? createWriteStream(opts.output) : process.stdout;
      for await (const text of csvOfPages(pages)) {
        if (!out.write(text)) await once(out, 'drain');
      }
      if (opts.output) await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    });

  cmd
    .command('import <file>')
    .description('read a CSV with a header row (address[,stream][,reason]); bad lines are reported by number and the rest imported, exit status 1 unless --allow-partial')
    .option('--workspace <name>', WORKSPACE_HELP)
    .option('--stream <stream>', 'stream for rows without one')
    .option('--allow-partial', 'exit 0 even when some lines were skipped')
    .option('--json', 'print JSON')
    .action(async (file: string, opts: { workspace?: string; stream?: string; allowPartial?: boolean; json?: boolean }) => {
      const { suppressions } = await ctx.open();
      const wsId = await workspaceId(opts.workspace);
      const { checkStream } = await service();
      const text = readFileSync(file, 'utf8');
      const { records, added, existing, problems } = await suppressions.importCsv(wsId, text, { defaultStream: opts.stream ? checkStream(opts.stream) : undefined });
      for (const p of problems) process.stderr.write(`${file}:${p.line}: ${p.error}\n`);
      const summary = { read: records, imported: added, already_present: existing, errors: problems };
      emit(opts.json, summary, () => printLines([`Imported ${added} entries (${existing} already present, ${problems.length} bad lines).`]));
      if (problems.length > 0 && !opts.allowPartial) {
        throw new Error(`${problems.length} line(s) of ${file} skipped, the other entries imported; fix them and import again, or pass --allow-partial to accept`);
      }
    });
}
