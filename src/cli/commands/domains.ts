import type { Command } from 'commander';
import type { DomainView } from '../../domains/service.ts';
import type { CliContext } from '../context.ts';
import { onOff } from '../context.ts';
import { emit, printLines, printTable } from '../output.ts';

function printDomain(d: DomainView): void {
  printLines([
    `${d.name} (id ${d.id}): ${d.status}${d.verified_by === 'override' ? ' (OPERATOR OVERRIDE, no DNS proof)' : ''}`,
    `  open tracking ${d.open_tracking ? 'on' : 'off'}, click tracking ${d.click_tracking ? 'on' : 'off'}`,
    '',
    'Publish these DNS records:',
  ]);
  printTable(
    d.records.map((r) => ({ ...r, required: r.required ? 'yes' : 'no', verified: r.verified ? 'yes' : 'no', priority: r.priority ?? '' })),
    ['purpose', 'type', 'name', 'priority', 'value', 'required', 'verified'],
  );
  if (d.problems.length > 0) printLines(['', 'Problems at the last check:', ...d.problems.map((p) => `  - ${p}`)]);
}

export function registerDomainCommands(program: Command, ctx: CliContext): void {
  const domain = program.command('domain').description('sending domains, their DNS records and tracking');

  domain
    .command('add <domain>')
    .description('add a sending domain and generate its DKIM key')
    .requiredOption('--workspace <name>', 'workspace name')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { workspace: string; json?: boolean }) => {
      const { tenancy, domains } = await ctx.open();
      const ws = await tenancy.workspaceByName(opts.workspace);
      const view = domains.view(await domains.add(ws.id, name));
      emit(opts.json, view, () => printDomain(view));
    });

  domain
    .command('list')
    .option('--workspace <name>', 'only this workspace')
    .option('--json', 'print JSON')
    .action(async (opts: { workspace?: string; json?: boolean }) => {
      const { tenancy, domains } = await ctx.open();
      const scope = opts.workspace ? { workspaceId: (await tenancy.workspaceByName(opts.workspace)).id } : null;
      const rows = (await domains.list(scope)).map((r) => ({ ...domains.view(r), workspace_id: r.workspace_id }));
      emit(opts.json, rows, () => printTable(rows, ['id', 'workspace_id', 'name', 'status', 'selector', 'open_tracking', 'click_tracking']));
    });

  domain
    .command('show <domain>')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { json?: boolean }) => {
      const { domains } = await ctx.open();
      const view = domains.view(await domains.get(null, name));
      emit(opts.json, view, () => printDomain(view));
    });

  domain
    .command('verify <domain>')
    .description('look the records up through dns.servers; verified when every required record matches')
    .option('--skip-dns', 'mark verified WITHOUT DNS proof, for local trials only (receivers will fail its DKIM)')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { skipDns?: boolean; json?: boolean }) => {
      const { domains } = await ctx.open();
      if (opts.skipDns) {
        process.stderr.write(`WARNING: marking ${name} verified without DNS proof. Use this for local trials only.\n`);
      }
      const row = opts.skipDns ? await domains.forceVerify(null, name) : await domains.verify(null, name);
      const view = domains.view(row);
      emit(opts.json, view, () => printDomain(view));
    });

  domain
    .command('remove <domain>')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { json?: boolean }) => {
      const row = await (await ctx.open()).domains.remove(null, name);
      emit(opts.json, { id: row.id, name: row.name, deleted: true }, () => printLines([`Domain ${row.name} removed.`]));
    });

  domain
    .command('tracking <domain>')
    .description('turn open and click tracking on or off')
    .option('--open <on|off>', 'open tracking', onOff)
    .option('--click <on|off>', 'click tracking', onOff)
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { open?: boolean; click?: boolean; json?: boolean }) => {
      const { domains } = await ctx.open();
      const view = domains.view(await domains.setTracking(null, name, opts));
      emit(opts.json, view, () => printLines([`${view.name}: open tracking ${view.open_tracking ? 'on' : 'off'}, click tracking ${view.click_tracking ? 'on' : 'off'}`]));
    });
}
