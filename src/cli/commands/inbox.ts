import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { RunningServer } from '../../main.ts';
import type { CliContext } from '../context.ts';
import { positiveInt } from '../context.ts';
import { emit, printLines, printTable } from '../output.ts';

/** The desktop's "open this file" command, or null where there is none to try. */
function systemOpener(): string[] | null {
  if (process.platform === 'darwin') return ['open'];
  if (process.platform === 'win32') return ['cmd', '/c', 'start', '""'];
  return ['xdg-open'];
}

/** Starts the opener detached; false when it is not installed. */
function tryOpen(file: string): Promise<boolean> {
  const opener = systemOpener();
  if (!opener) return Promise.resolve(false);
  return new Promise((resolve) => {
    const child = spawn(opener[0]!, [...opener.slice(1), file], { detached: true, stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}

export function registerInboxCommands(program: Command, ctx: CliContext): void {
  const inbox = program.command('inbox').description('the sandbox inbox: every message a sandbox server (serve --sandbox) would have sent, newest first');

  inbox
    .command('list')
    .description('captured messages with their simulated outcome and DKIM result')
    .option('--workspace <name>', 'only this workspace')
    .option('--email <id>', 'only the copies of this message (the id POST /emails returned)', positiveInt)
    .option('--limit <n>', 'at most this many (default 20)', positiveInt)
    .option('--json', 'print JSON')
    .action(async (opts: { workspace?: string; email?: number; limit?: number; json?: boolean }) => {
      const { sandbox } = await ctx.open();
      const { captureSummary } = await import('../../sandbox/inbox.ts');
      const scope = opts.workspace ? { workspaceId: (await ctx.workspace(opts.workspace)).id } : null;
      const rows = (await sandbox.list(scope, { limit: opts.limit ?? 20, emailId: opts.email })).map(captureSummary);
      emit(opts.json, rows, () =>
        printTable(
          rows.map((r) => ({ ...r, dkim: r.dkim.result })),
          ['id', 'captured_at', 'email_id', 'recipient', 'outcome', 'dkim', 'subject'],
        ),
      );
      if (rows.length === 0 && !opts.json) {
        process.stderr.write('The sandbox inbox fills while a server runs in sandbox mode: mailsvc serve --sandbox (npm run sandbox).\n');
      }
    });

  inbox
    .command('show <id>')
    .description('one captured message: envelope, outcome, DKIM result and the raw MIME')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      const { sandbox } = await ctx.open();
      const { captureDetail } = await import('../../sandbox/inbox.ts');
      const view = captureDetail(await sandbox.get(null, positiveInt(id)));
      emit(opts.json, view, () =>
        printLines([
          `Sandbox message ${view.id} (email ${view.email_id}), captured ${view.captured_at}`,
          `MAIL FROM: <${view.envelope.mail_from}>`,
          `RCPT TO:   <${view.envelope.rcpt_to}>`,
          `Outcome:   ${view.outcome} (${view.response})`,
          `DKIM:      ${view.dkim.result}: ${view.dkim.detail}`,
          '',
          view.raw.replace(/\r\n/g, '\n'),
        ]),
      );
    });

  inbox
    .command('open <id>')
    .description('write the message to a temporary .eml file and open it with the system mail viewer (or print the path)')
    .action(async (id: string) => {
      const { sandbox } = await ctx.open();
      const row = await sandbox.get(null, positiveInt(id));
      const file = join(mkdtempSync(join(tmpdir(), 'mailsvc-inbox-')), `message-${row.id}.eml`);
      writeFileSync(file, row.raw, { mode: 0o600 });
      const opened = await tryOpen(file);
      printLines([opened ? `Opened ${file}` : file]);
    });
}

/** What `serve --sandbox` prints for people: where mail goes, and on an empty database how to try it. */
export async function sandboxWelcome(server: RunningServer): Promise<string[]> {
  const [{ SANDBOX_DOMAIN, SIMULATIONS }, { workspaces }] = await Promise.all([import('../../sandbox/index.ts'), import('../../store/workspaces.ts')]);
  const lines = [`Sandbox mode: nothing leaves this machine; every message lands in the sandbox inbox (mailsvc inbox list).`];
  if (!server.url || (await workspaces.list(server.services.db)).length > 0) return lines;
  const api = `http://localhost:${server.roles.api!.ports.http}/api/v1`;
  return [
    ...lines,
    '',
    'Try it from another terminal in this directory:',
    '  export MAILSVC_DELIVERY_MODE=sandbox              # the CLI in sandbox mode too: *.test domains verify without DNS',
    '  ./bin/mailsvc workspace create acme               # prints the API key once: mk_...',
    '  ./bin/mailsvc domain add acme.test --workspace acme',
    '  ./bin/mailsvc domain verify acme.test',
    `  curl -X POST ${api}/emails -H "Authorization: Bearer mk_..." -H "Content-Type: application/json" \\`,
    `    -d '{"from": "hello@acme.test", "to": "delivered@${SANDBOX_DOMAIN}", "subject": "Hi", "text": "Hello"}'`,
    '  ./bin/mailsvc inbox list',
    '',
    `Simulated recipients at ${SANDBOX_DOMAIN}: ${Object.keys(SIMULATIONS)
      .map((l) => `${l}@`)
      .join(', ')}; any other address is delivered.`,
  ];
}
