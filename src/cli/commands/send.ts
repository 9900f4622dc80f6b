import { hostname } from 'node:os';
import type { Command } from 'commander';
import type { Services } from '../../services.ts';
import type { Principal } from '../../tenancy/principal.ts';
import type { CliContext } from '../context.ts';
import { positiveInt } from '../context.ts';
import { emit, printLines, printTable } from '../output.ts';

const FINAL = new Set(['delivered', 'bounced', 'failed', 'suppressed', 'canceled']);

interface SendOptions {
  from: string;
  to: string[];
  subject?: string;
  text?: string;
  html?: string;
  workspace?: string;
  stream?: string;
  wait?: number;
  json?: boolean;
}

/** Polls until every recipient is final or the time is up; a running `serve` does the sending. */
async function waitForOutcome(services: Services, id: number, seconds: number) {
  const { messagesRepo } = await import('../../store/messages.ts');
  const until = Date.now() + seconds * 1000;
  for (;;) {
    const rows = await messagesRepo.recipients(services.db, id);
    if (rows.every((r) => FINAL.has(r.status)) || Date.now() >= until) return rows;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export function registerSendCommand(program: Command, ctx: CliContext): void {
  program
    .command('send')
    .description('queue a quick test message through the same path as POST /emails (a running server delivers it)')
    .requiredOption('--from <address>', 'sender on a verified domain, e.g. "Ops <ops@example.com>"')
    .requiredOption('--to <address...>', 'one or more recipients')
    .option('--subject <text>', 'subject', 'mailsvc test message')
    .option('--text <text>', 'plain-text body')
    .option('--html <html>', 'HTML body')
    .option('--stream <stream>', 'transactional or broadcast', 'transactional')
    .option('--workspace <name>', 'workspace (default: the only one)')
    .option('--wait <seconds>', 'wait up to this long for every recipient’s outcome', positiveInt)
    .option('--json', 'print JSON')
    .action(async (opts: SendOptions) => {
      const services = await ctx.open();
      const [{ validateSend }, { messagesRepo }] = await Promise.all([import('../../messages/validate.ts'), import('../../store/messages.ts')]);
      const ws = await ctx.workspace(opts.workspace);
      const key = (await services.tenancy.listKeys(ws.id)).find((k) => k.revoked_at === null && k.domain === null);
      // Sent as the workspace itself; its first live key is recorded as the sender for the audit trail.
      const principal: Principal = { keyId: key?.id ?? 0, workspaceId: ws.id, domain: null, limits: { perMinute: ws.rate_per_minute, perHour: ws.rate_per_hour } };
      const text = opts.text ?? (opts.html ? undefined : `A test message from mailsvc on ${hostname()} at ${new Date(services.clock.now()).toISOString()}.`);
      const message = validateSend(
        {
          from: opts.from,
          to: opts.to,
          subject: opts.subject ?? 'mailsvc test message',
          stream: opts.stream,
          ...(text ? { text } : {}),
          ...(opts.html ? { html: opts.html } : {}),
        },
        services.clock.now(),
      );
      const { body } = await services.accept.accept(principal, message);
      const recipients = opts.wait ? await waitForOutcome(services, body.id, opts.wait) : await messagesRepo.recipients(services.db, body.id);
      const view = recipients.map((r) => ({ address: r.address, status: r.status, attempts: r.attempts, last_response: r.last_response }));
      emit(opts.json, { id: body.id, stream: body.stream, recipients: view }, () => {
        printLines([`Message ${body.id} accepted (${body.stream}).`]);
        printTable(view, ['address', 'status', 'attempts', 'last_response']);
        if (!opts.wait) printLines([`A running server delivers it; follow with: mailsvc queue list --email ${body.id}`]);
      });
    });
}
