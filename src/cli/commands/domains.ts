import { InvalidArgumentError, type Command } from 'commander';
import { keyView, parseAlgorithm, type DkimKeyView } from '../../domains/keys.ts';
import type { DomainView } from '../../domains/service.ts';
import type { CliContext } from '../context.ts';
import { named, onOff } from '../context.ts';
import { emit, printLines, printTable, wrap } from '../output.ts';

function printDomain(d: DomainView): void {
  printLines([
    `${d.name} (id ${d.id}): ${d.status}${d.verified_by === 'override' ? ' (OPERATOR OVERRIDE, no DNS proof)' : d.verified_by === 'sandbox' ? ' (in the sandbox: its records count as published here only)' : ''}`,
    `  open tracking ${d.open_tracking ? 'on' : 'off'}, click tracking ${d.click_tracking ? 'on' : 'off'}`,
    `  sending pool: ${d.pool ?? "none of its own (the workspace's, else the stream's, else every source address)"}`,
    `  receiving: ${d.inbound ? 'on (mail for its routes comes in through the inbound MX)' : 'off'}`,
    '',
    'Publish these DNS records:',
  ]);
  printTable(
    d.records.map((r) => ({ ...r, required: r.required ? 'yes' : 'no', verified: r.verified ? 'yes' : 'no', priority: r.priority ?? '' })),
    ['purpose', 'type', 'name', 'priority', 'value', 'required', 'verified'],
    { elideFirst: ['value'] },
  );
  if (d.problems.length > 0) printLines(['', 'Problems at the last check:', ...d.problems.flatMap((p) => wrap(`  - ${p}`, '    '))]);
}

export function registerDomainCommands(program: Command, ctx: CliContext): void {
  const domain = program.command('domain').description('sending domains, their DNS records and tracking');

  domain
    .command('add <domain>')
    .description('add a sending domain, generate its DKIM key and print the DNS records to publish')
    .option('--workspace <name>', 'workspace that sends from it (default: the only one)')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { workspace?: string; json?: boolean }) => {
      const { domains } = await ctx.open();
      const ws = await ctx.workspace(opts.workspace);
      const view = domains.view(await domains.add(ws.id, name));
      emit(opts.json, view, () => printDomain(view));
    });

  domain
    .command('list')
    .description('every sending domain with its status and tracking switches')
    .option('--workspace <name>', 'only this workspace (default: all)')
    .option('--json', 'print JSON')
    .action(async (opts: { workspace?: string; json?: boolean }) => {
      const { domains } = await ctx.open();
      const scope = opts.workspace ? { workspaceId: (await ctx.workspace(opts.workspace)).id } : null;
      const rows = (await domains.list(scope)).map((r) => ({ ...domains.view(r), workspace_id: r.workspace_id }));
      emit(opts.json, rows, () => printTable(rows, ['id', 'workspace_id', 'name', 'status', 'selector', 'open_tracking', 'click_tracking', 'pool']));
    });

  domain
    .command('show <domain>')
    .description('a domain: status, tracking, the DNS records to publish and the problems found at the last check')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { json?: boolean }) => {
      const { domains } = await ctx.open();
      const view = domains.view(await named('domain', name, () => domains.get(null, name)));
      emit(opts.json, view, () => printDomain(view));
    });

  domain
    .command('verify <domain>')
    .description('look the records up through dns.servers; verified when every required record matches, else exits 1 naming each mismatch')
    .option('--skip-dns', 'mark verified WITHOUT DNS proof, for local trials only (receivers will fail its DKIM)')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { skipDns?: boolean; json?: boolean }) => {
      const { domains } = await ctx.open();
      if (opts.skipDns) {
        process.stderr.write(`WARNING: marking ${name} verified without DNS proof. Use this for local trials only.\n`);
      }
      const row = await named('domain', name, () => (opts.skipDns ? domains.forceVerify(null, name) : domains.verify(null, name)));
      const view = domains.view(row);
      emit(opts.json, view, () => printDomain(view));
      if (view.status !== 'verified') {
        const problems = view.problems.length > 0 ? `: ${view.problems.join('; ')}` : '';
        throw new Error(`domain ${JSON.stringify(view.name)} is not verified${problems}`);
      }
    });

  domain
    .command('remove <domain>')
    .description('remove a sending domain and its DKIM key; mail from it is refused from then on')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { json?: boolean }) => {
      const { domains } = await ctx.open();
      const row = await named('domain', name, () => domains.remove(null, name));
      emit(opts.json, { id: row.id, name: row.name, deleted: true }, () => printLines([`Domain ${row.name} removed.`]));
    });

  domain
    .command('tracking <domain>')
    .description('turn open and click tracking on or off (read at send time and again when a hit arrives)')
    .option('--open <on|off>', 'open tracking', onOff)
    .option('--click <on|off>', 'click tracking', onOff)
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { open?: boolean; click?: boolean; json?: boolean }) => {
      const { domains } = await ctx.open();
      const view = domains.view(await named('domain', name, () => domains.update(null, name, opts)));
      emit(opts.json, view, () => printLines([`${view.name}: open tracking ${view.open_tracking ? 'on' : 'off'}, click tracking ${view.click_tracking ? 'on' : 'off'}`]));
    });

  domain
    .command('inbound <domain> <on|off>')
    .description('receive mail for its routes (`route add`); on adds the required MX record of the domain to this server')
    .option('--json', 'print JSON')
    .action(async (name: string, state: string, opts: { json?: boolean }) => {
      const { domains } = await ctx.open();
      const view = domains.view(await named('domain', name, () => domains.update(null, name, { inbound: onOff(state) })));
      emit(opts.json, view, () => printDomain(view));
    });

  domain
    .command('pool <domain> <pool>')
    .description('send its mail from a pool of delivery.pools (before its workspace’s and its stream’s); none: name no pool')
    .option('--json', 'print JSON')
    .action(async (name: string, pool: string, opts: { json?: boolean }) => {
      const { poolArgument, poolLines } = await import('../pool-lines.ts');
      const { domains, tenancy, config } = await ctx.open();
      const row = await named('domain', name, () => domains.update(null, name, { pool: poolArgument(pool) }));
      const view = domains.view(row);
      const workspace = opts.json ? null : await tenancy.workspaceById(row.workspace_id);
      emit(opts.json, view, () =>
        printLines([
          `${view.name}: ${view.pool === null ? 'no pool of its own' : `pool ${view.pool}`}; its mail goes from`,
          ...poolLines({ domainPool: view.pool, workspacePool: workspace?.pool ?? null }, config.delivery),
        ]),
      );
    });

  registerKeyCommands(domain, ctx);
}

function algorithmArgument(value: string) {
  const algorithm = parseAlgorithm(value);
  if (!algorithm) throw new InvalidArgumentError('must be rsa or ed25519');
  return algorithm;
}

function overlapArgument(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 365) throw new InvalidArgumentError('must be a whole number of days from 0 to 365');
  return n;
}

const minute = (at: string | null) => (at ? `${at.slice(0, 10)} ${at.slice(11, 16)}` : '');

/** --json has every field; the table what fits: times to the minute (UTC). */
function printKeys(keys: DkimKeyView[]): void {
  printTable(
    keys.map((k) => ({ ...k, verified: minute(k.verified_at), published_until: minute(k.retire_after) })),
    ['id', 'selector', 'algorithm', 'status', 'verified', 'published_until'],
  );
}

function printNewKeys(keys: DkimKeyView[], domain: string): void {
  printKeys(keys);
  printLines(['', 'Publish these DNS records, then run mailsvc domain verify ' + domain + ':']);
  printTable(
    keys.map((k) => k.record),
    ['type', 'name', 'value'],
    { elideFirst: ['value'] },
  );
}

/** SPEC §13: `domain key add|rotate|list`. */
function registerKeyCommands(domain: Command, ctx: CliContext): void {
  const key = domain.command('key').description('DKIM keys of a domain: RSA and Ed25519 (dual signing), rotation');

  key
    .command('add <domain>')
    .description('add a DKIM key of another algorithm (pending until its record verifies; then it signs beside the other)')
    .requiredOption('--algorithm <rsa|ed25519>', 'the key type', algorithmArgument)
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { algorithm: ReturnType<typeof algorithmArgument>; json?: boolean }) => {
      const { domains } = await ctx.open();
      const row = await named('domain', name, () => domains.get(null, name));
      const view = keyView(await domains.addKey(null, row.id, opts.algorithm), row.name);
      emit(opts.json, view, () => printNewKeys([view], row.name));
    });

  key
    .command('rotate <domain>')
    .description('a new key (new selector) for each active key, or for one algorithm; the old key signs until the new one verifies, then stays published for the overlap')
    .option('--algorithm <rsa|ed25519>', 'rotate only the key of this type', algorithmArgument)
    .option('--overlap <days>', 'days the old key stays published once the new one verifies (default 7)', overlapArgument)
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { algorithm?: ReturnType<typeof algorithmArgument>; overlap?: number; json?: boolean }) => {
      const { domains } = await ctx.open();
      const row = await named('domain', name, () => domains.get(null, name));
      const created = await domains.rotate(null, row.id, { algorithm: opts.algorithm, overlapDays: opts.overlap });
      const views = created.map((k) => keyView(k, row.name));
      emit(opts.json, views, () => printNewKeys(views, row.name));
    });

  key
    .command('list <domain>')
    .description('the DKIM keys of a domain with their status: pending, active (signs), retiring (still published), retired')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { json?: boolean }) => {
      const { domains } = await ctx.open();
      const row = await named('domain', name, () => domains.get(null, name));
      const views = row.keys.map((k) => keyView(k, row.name));
      emit(opts.json, views, () => printKeys(views));
    });
}
