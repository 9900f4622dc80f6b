import { Command, Option } from 'commander';
import { registerBounceCommands } from './commands/bounces.ts';
import { registerDoctorCommand } from './commands/doctor.ts';
import { registerDomainCommands } from './commands/domains.ts';
import { registerHealthcheckCommand } from './commands/health.ts';
import { registerInboxCommands } from './commands/inbox.ts';
import { registerQueueCommands } from './commands/queue.ts';
import { registerSendCommand } from './commands/send.ts';
import { registerTenancyCommands } from './commands/tenancy.ts';
import { registerSuppressionCommands } from './commands/suppression.ts';
import { registerUsageCommand } from './commands/usage.ts';
import { registerWebhookCommands } from './commands/webhooks.ts';
import { registerRouteCommands } from './commands/routes.ts';
import { CliContext, positiveInt } from './context.ts';
import { emit, printLines, setWide } from './output.ts';
import { sandboxWelcome } from './commands/inbox.ts';

export function buildProgram(): { program: Command; ctx: CliContext } {
  const program = new Command('mailsvc')
    .description('Self-hosted mail transfer server: HTTP API and SMTP submission in, direct MX delivery out')
    .addOption(new Option('--config <file>', 'configuration file (also MAILSVC_CONFIG)'))
    .addOption(new Option('--wide', 'print table values in full instead of fitting 100 columns'))
    .hook('preAction', (root) => setWide(root.opts().wide === true))
    .showHelpAfterError()
    .configureOutput({ outputError: (str, write) => write(str) });
  const ctx = new CliContext(program);

  program
    .command('serve')
    .description('run the server (all roles by default)')
    .option('--roles <list>', 'comma-separated: api,submission,inbound,delivery,webhooks')
    .option('--http-port <port>', 'override http.port', (v) => (v === '0' ? 0 : positiveInt(v)))
    .option('--sandbox', 'deliver nothing: capture every message in the local inbox (delivery.mode "sandbox")')
    .action(async (opts: { roles?: string; httpPort?: number; sandbox?: boolean }) => {
      const config = await ctx.config({
        ...(opts.httpPort !== undefined ? { http: { port: opts.httpPort } } : {}),
        ...(opts.sandbox ? { delivery: { mode: 'sandbox' } } : {}),
      });
      const { parseRoles, startServer } = await import('../main.ts');
      const server = await startServer(config, { roles: parseRoles(opts.roles), logRequests: true });
      if (config.delivery.mode === 'sandbox') printLines(await sandboxWelcome(server));
      const stop = (signal: string) => {
        server.services.log.info({ phase: 'stop', signal }, 'shutting down');
        server.close().then(
          () => process.exit(0),
          (err) => {
            server.services.log.error({ err }, 'error while shutting down');
            process.exit(1);
          },
        );
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    });

  program
    .command('migrate')
    .description('apply pending database migrations')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const config = await ctx.config();
      const [{ createDb }, { migrate }] = await Promise.all([import('../store/db.ts'), import('../store/migrate.ts')]);
      const db = createDb(config.database);
      try {
        const applied = await migrate(db);
        emit(opts.json, { applied }, () => printLines([applied.length ? `Applied: ${applied.join(', ')}` : 'Already up to date.']));
      } finally {
        await db.destroy();
      }
    });

  registerDoctorCommand(program, ctx);
  registerHealthcheckCommand(program, ctx);
  registerTenancyCommands(program, ctx);
  registerDomainCommands(program, ctx);
  registerQueueCommands(program, ctx);
  registerSendCommand(program, ctx);
  registerBounceCommands(program);
  registerSuppressionCommands(program, ctx);
  registerUsageCommand(program, ctx);
  registerWebhookCommands(program, ctx);
  registerRouteCommands(program, ctx);
  registerInboxCommands(program, ctx);
  return { program, ctx };
}

/** Runs one CLI invocation; errors go to stderr with a non-zero exit. */
export async function runCli(argv: string[]): Promise<void> {
  const { program, ctx } = buildProgram();
  // A reader that stops early (`mailsvc domain list | head -2`) ends the command quietly, as it
  // would a Unix tool; a running server goes on without its standard output.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    if (program.args[0] !== 'serve') process.exit(process.exitCode ?? 0);
  });
  let failed = false;
  try {
    await program.parseAsync(argv);
  } catch (err) {
    failed = true;
    process.stderr.write(`error: ${(err as Error).message ?? String(err)}\n`);
  }
  const serving = program.args[0] === 'serve' && !failed;
  if (!serving) {
    await ctx.close();
    process.exitCode = failed ? 1 : 0;
  }
}
