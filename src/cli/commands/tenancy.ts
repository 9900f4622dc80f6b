import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { named, positiveInt } from '../context.ts';
import { emit, printLines, printTable } from '../output.ts';

export function registerTenancyCommands(program: Command, ctx: CliContext): void {
  const views = () => import('../../tenancy/service.ts');
  const workspace = program.command('workspace').description('workspaces, their plan limits and sending pool');

  workspace
    .command('create <name>')
    .description('create a workspace and print its first API key (shown once)')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { json?: boolean }) => {
      const { tenancy, config } = await ctx.open();
      const { workspace: row, apiKey } = await tenancy.createWorkspace(name);
      // In the sandbox only `.test` names verify without DNS (RFC 6761): suggest one there.
      const example =
        config.delivery.mode === 'sandbox'
          ? `${
              row.name
                .toLowerCase()
                .replace(/[^a-z0-9-]+/g, '-')
                .replace(/^-+|-+$/g, '') || 'acme'
            }.test`
          : 'example.com';
      emit(opts.json, { id: row.id, name: row.name, api_key: apiKey }, () =>
        printLines([
          `Workspace ${row.name} created (id ${row.id}).`,
          `API key (shown once, store it now): ${apiKey}`,
          `Next: mailsvc domain add ${example} --workspace ${row.name}`,
        ]),
      );
    });

  workspace
    .command('list')
    .description('workspaces with their plan and rate limits')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const { workspaceView } = await views();
      const rows = (await (await ctx.open()).tenancy.listWorkspaces()).map(workspaceView);
      emit(opts.json, rows, () => printTable(rows, ['id', 'name', 'plan', 'rate_per_minute', 'rate_per_hour', 'pool', 'created_at']));
    });

  workspace
    .command('limits <name>')
    .description('set the rate limits (requests per API key); plans: free, scale, dedicated')
    .option('--per-minute <n>', 'requests per minute per key', positiveInt)
    .option('--per-hour <n>', 'requests per hour per key', positiveInt)
    .option('--plan <plan>', 'start from a plan’s limits')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { perMinute?: number; perHour?: number; plan?: string; json?: boolean }) => {
      const { workspaceView } = await views();
      const { tenancy } = await ctx.open();
      const row = workspaceView(await named('workspace', name, () => tenancy.setLimits(name, opts)));
      emit(opts.json, row, () => printLines([`${row.name}: ${row.rate_per_minute}/minute, ${row.rate_per_hour}/hour (plan ${row.plan})`]));
    });

  workspace
    .command('pool <name> <pool>')
    .description('send its mail from a pool of delivery.pools unless its domain names one (before its stream’s); none: name no pool')
    .option('--json', 'print JSON')
    .action(async (name: string, pool: string, opts: { json?: boolean }) => {
      const [{ workspaceView }, { poolArgument, poolLines }] = await Promise.all([views(), import('../pool-lines.ts')]);
      const { tenancy, config } = await ctx.open();
      const row = workspaceView(await named('workspace', name, () => tenancy.setPool(name, poolArgument(pool))));
      emit(opts.json, row, () =>
        printLines([
          `${row.name}: ${row.pool === null ? 'no pool of its own' : `pool ${row.pool}`}; unless a domain names its own, its mail goes from`,
          ...poolLines({ domainPool: null, workspacePool: row.pool }, config.delivery),
        ]),
      );
    });

  const key = program.command('key').description('API keys');

  key
    .command('create')
    .description('create an API key, scoped to the workspace or narrowed to one domain')
    .option('--workspace <name>', 'workspace name (default: the only one)')
    .option('--domain <domain>', 'narrow the key to one sending domain')
    .option('--name <name>', 'a label for the key')
    .option('--json', 'print JSON')
    .action(async (opts: { workspace?: string; domain?: string; name?: string; json?: boolean }) => {
      const { tenancy } = await ctx.open();
      const ws = await ctx.workspace(opts.workspace);
      const { secret, row } = await tenancy.createKey(ws.id, { name: opts.name, domain: opts.domain });
      const { scopeOf } = await import('../../tenancy/principal.ts');
      emit(opts.json, { id: row.id, api_key: secret, scope: scopeOf(row.domain), name: row.name }, () =>
        printLines([`Key ${row.id} (${scopeOf(row.domain)}) created.`, `API key (shown once): ${secret}`]),
      );
    });

  key
    .command('list')
    .description('API keys (prefix only: secrets are never stored), with scope and revocation time')
    .option('--workspace <name>', 'only this workspace (default: all)')
    .option('--json', 'print JSON')
    .action(async (opts: { workspace?: string; json?: boolean }) => {
      const { tenancy } = await ctx.open();
      const wsId = opts.workspace ? (await ctx.workspace(opts.workspace)).id : undefined;
      const { keyView } = await views();
      const rows = (await tenancy.listKeys(wsId)).map((r) => ({ ...keyView(r), workspace_id: r.workspace_id }));
      emit(opts.json, rows, () => printTable(rows, ['id', 'workspace_id', 'name', 'prefix', 'scope', 'created_at', 'revoked_at']));
    });

  key
    .command('revoke <id>')
    .description('revoke a key; a running server refuses it at once')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      const { keyView } = await views();
      const { tenancy } = await ctx.open();
      const row = keyView(await named('key', id, () => tenancy.revokeKey(positiveInt(id))));
      for (const { network } of (await ctx.config()).submission.trustedNetworks.filter((n) => n.keyId === row.id)) {
        process.stderr.write(`WARNING: key ${row.id} is the key of trusted network ${network} (submission.trustedNetworks): its clients must now authenticate.\n`);
      }
      emit(opts.json, row, () => printLines([`Key ${row.id} revoked at ${row.revoked_at}.`]));
    });
}
