import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { named, positiveInt } from '../context.ts';
import { emit, printLines, printTable } from '../output.ts';

/** `mailsvc route`: inbound routes that POST received mail to an application (SPEC §14). */
export function registerRouteCommands(program: Command, ctx: CliContext): void {
  const route = program.command('route').description('inbound routes: received mail POSTed to a URL');

  route
    .command('add <match> <url>')
    .description('route mail for an address, *@domain or a one-* pattern (*+tag@domain) of a receiving domain; prints its signing secret')
    .option('--workspace <name>', 'workspace name (default: the only one)')
    .option('--priority <n>', 'among equally specific matches, the lowest wins (default 0)', (v) => Number(v))
    .option('--json', 'print JSON')
    .action(async (match: string, url: string, opts: { workspace?: string; priority?: number; json?: boolean }) => {
      const { routes } = await ctx.open();
      const { routeView } = await import('../../routes/service.ts');
      const view = routeView(await routes.create((await ctx.workspace(opts.workspace)).id, { match, url, priority: opts.priority }));
      emit(opts.json, view, () => printLines([`route ${view.id}: ${view.match} → ${view.url} (priority ${view.priority})`, `secret: ${view.secret}`]));
    });

  route
    .command('list')
    .description('routes of a workspace with their status and failure count')
    .option('--workspace <name>', 'workspace name (default: the only one)')
    .option('--json', 'print JSON')
    .action(async (opts: { workspace?: string; json?: boolean }) => {
      const { routes } = await ctx.open();
      const { routeView } = await import('../../routes/service.ts');
      const rows = (await routes.list((await ctx.workspace(opts.workspace)).id)).map(routeView);
      emit(opts.json, rows, () => printTable(rows, ['id', 'match', 'priority', 'status', 'failure_count', 'last_success_at', 'url']));
    });

  route
    .command('remove <id>')
    .description('remove a route; its recipients are refused from then on')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      const { routes } = await ctx.open();
      const row = await named('route', positiveInt(id), () => routes.byId(positiveInt(id)));
      await routes.remove(row.workspace_id, row.id);
      emit(opts.json, { id: row.id, deleted: true }, () => printLines([`Route ${row.id} (${row.route_match}) removed.`]));
    });

  route
    .command('deliveries <id>')
    .description('the delivery log of a route, newest first')
    .option('--limit <n>', 'at most this many attempts', positiveInt, 20)
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { limit: number; json?: boolean }) => {
      const { routes } = await ctx.open();
      const { routeAttemptView } = await import('../../routes/service.ts');
      const row = await named('route', positiveInt(id), () => routes.byId(positiveInt(id)));
      const rows = (await routes.attempts(row.workspace_id, row.id, { limit: opts.limit })).map(routeAttemptView);
      emit(opts.json, rows, () => printTable(rows, ['created_at', 'inbound_id', 'attempt', 'response_code', 'duration_ms', 'error']));
    });
}
