import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { named, positiveInt } from '../context.ts';
import { emit, printLines, printTable } from '../output.ts';

const EVENT_LIST = 'comma-separated event names, e.g. email.bounced,email.complained (default: every event)';

/** `mailsvc webhook`: register endpoints, see their state and log, re-enable, send a test event. */
export function registerWebhookCommands(program: Command, ctx: CliContext): void {
  const webhook = program.command('webhook').description('webhook endpoints: register, inspect, re-enable, test');

  const endpoint = async (id: number) => {
    const { webhooks } = await ctx.open();
    return named('webhook', id, () => webhooks.byId(id));
  };

  webhook
    .command('add <url>')
    .description('register an endpoint; prints it with its signing secret')
    .option('--workspace <name>', 'workspace name (default: the only one)')
    .option('--events <list>', EVENT_LIST)
    .option('--json', 'print JSON')
    .action(async (url: string, opts: { workspace?: string; events?: string; json?: boolean }) => {
      const { webhooks } = await ctx.open();
      const { endpointView } = await import('../../webhooks/service.ts');
      const events = opts.events
        ?.split(',')
        .map((e) => e.trim())
        .filter(Boolean);
      const view = endpointView(await webhooks.create((await ctx.workspace(opts.workspace)).id, { url, events }));
      emit(opts.json, view, () => printLines([`webhook ${view.id} → ${view.url}`, `events: ${view.events.join(', ')}`, `secret: ${view.secret}`]));
    });

  webhook
    .command('list')
    .description('endpoints of a workspace with their status and failure count')
    .option('--workspace <name>', 'workspace name (default: the only one)')
    .option('--json', 'print JSON')
    .action(async (opts: { workspace?: string; json?: boolean }) => {
      const { webhooks } = await ctx.open();
      const { endpointView } = await import('../../webhooks/service.ts');
      const rows = (await webhooks.list((await ctx.workspace(opts.workspace)).id)).map(endpointView);
      emit(opts.json, rows, () =>
        printTable(
          rows.map((r) => ({ ...r, events: r.events.length === 6 ? 'all' : r.events.join(',') })),
          ['id', 'status', 'failure_count', 'last_success_at', 'events', 'url'],
        ),
      );
    });

  webhook
    .command('show <id>')
    .description('one endpoint, its secret included')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      const { endpointView } = await import('../../webhooks/service.ts');
      const view = endpointView(await endpoint(positiveInt(id)));
      emit(opts.json, view, () => printLines(Object.entries(view).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : (v ?? '-')}`)));
    });

  webhook
    .command('enable <id>')
    .description('make a paused or disabled endpoint active again and reset its failure count')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      const { webhooks } = await ctx.open();
      const { endpointView } = await import('../../webhooks/service.ts');
      const row = await endpoint(positiveInt(id));
      const view = endpointView(await webhooks.update(row.workspace_id, row.id, { status: 'active' }));
      emit(opts.json, view, () =>
        printLines([`webhook ${view.id} is active; skipped events are sent again only by a replay (POST /api/v1/webhooks/${view.id}/replay).`]),
      );
    });

  webhook
    .command('deliveries <id>')
    .description('the delivery log of an endpoint, newest first')
    .option('--limit <n>', 'at most this many attempts', positiveInt, 20)
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { limit: number; json?: boolean }) => {
      const { webhooks } = await ctx.open();
      const { attemptView } = await import('../../webhooks/service.ts');
      const row = await endpoint(positiveInt(id));
      const rows = (await webhooks.attempts(row.workspace_id, row.id, { limit: opts.limit })).map(attemptView);
      emit(opts.json, rows, () => printTable(rows, ['created_at', 'event', 'email_id', 'recipient', 'attempt', 'response_code', 'duration_ms', 'error']));
    });

  webhook
    .command('test <id>')
    .description('POST a signed email.delivered-shaped test event to the endpoint now and print the answer; exit 1 unless 2xx')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      const services = await ctx.open();
      const [{ configuredPoster }, { testEventBody, testWebhookId }] = await Promise.all([import('../../webhooks/post.ts'), import('../../webhooks/service.ts')]);
      const row = await endpoint(positiveInt(id));
      const poster = configuredPoster(services.config, services.webhookHosts, services.clock);
      const body = testEventBody(services.config.server.hostname, services.clock.now());
      const result = await poster.post(row.url, body, row.secret, testWebhookId()).finally(() => poster.close());
      const doc = {
        id: row.id,
        url: row.url,
        ok: result.ok,
        response_code: result.status,
        response_body: result.body,
        error: result.error,
        duration_ms: result.durationMs,
        sent: JSON.parse(body),
      };
      emit(opts.json, doc, () =>
        printLines([
          `POST ${row.url}: ${result.status ?? 'no answer'} in ${result.durationMs} ms${result.error ? ` (${result.error})` : ''}`,
          ...(result.body ? ['', result.body] : []),
        ]),
      );
      if (!result.ok) throw new Error(`webhook ${row.id} did not answer 2xx: ${result.error ?? result.status}`);
    });
}
