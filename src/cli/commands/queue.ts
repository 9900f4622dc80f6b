import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { isoOrNull } from '../../core/time.ts';
import { UNFINISHED_STATUSES } from '../../messages/status.ts';
import type { RecipientRow } from '../../store/messages.ts';
import type { CliContext } from '../context.ts';
import { named, positiveInt } from '../context.ts';
import { emit, printLines, printTable } from '../output.ts';

const STATUSES: readonly string[] = UNFINISHED_STATUSES;

function statusList(value: string): string[] {
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = list.filter((s) => !STATUSES.includes(s));
  if (bad.length > 0) throw new InvalidArgumentError(`unknown status ${bad.join(', ')}; one of ${STATUSES.join(', ')}`);
  return list;
}

function stream(value: string): string {
  if (value !== 'transactional' && value !== 'broadcast') throw new InvalidArgumentError('must be transactional or broadcast');
  return value;
}

interface ControlOptions {
  domain?: string;
  sendingDomain?: string;
  group?: string;
  workspace?: string;
  stream?: string;
  email?: number;
  reason?: string;
  json?: boolean;
}

const CONTROL = {
  hold: 'hold waiting recipients (queued, deferred) until released; matching mail accepted later is held too',
  release: 'lift the holds the filter covers; their recipients are due at once, their retry window moved by the time held',
  cancel: 'cancel recipients not being sent (scheduled, queued, deferred, held): not billed, nothing suppressed',
} as const;

/** A group's limits in a few words. */
const limits = (g: { connections: number; per_minute: number | null }) => `${g.connections} conn, ${g.per_minute === null ? 'no rate limit' : `${g.per_minute}/min`}`;

/** Why a group is not sending, if it is not; `open` when it is. */
function groupState(g: { on_hold: boolean; hold_reason?: string; suspended_until?: string; reason?: string }): string {
  const states = [
    ...(g.on_hold ? [`on hold${g.hold_reason ? `: ${g.hold_reason}` : ''}`] : []),
    ...(g.suspended_until ? [`suspended until ${g.suspended_until}${g.reason ? `: ${g.reason}` : ''}`] : []),
  ];
  return states.length > 0 ? states.join('; ') : 'open';
}

const rowView = (r: RecipientRow) => ({
  email_id: r.message_id,
  recipient_id: r.id,
  address: r.address,
  domain: r.domain,
  status: r.status,
  attempts: r.attempts,
  due_at: isoOrNull(r.due_at),
  first_due_at: isoOrNull(r.first_due_at),
  last_mx: r.last_mx,
  last_response: r.last_response,
});

/** `mailsvc queue`: what is waiting, where it is going, and a way to retry it now. */
export function registerQueueCommands(program: Command, ctx: CliContext): void {
  const queue = program.command('queue').description('the delivery queue: counts, pending recipients, retry now, hold, release, cancel');

  queue
    .command('stats')
    .description('recipients by status, waiting ones by destination group, unfinished ones by domain, the oldest deferred')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const { db, queueControl } = await ctx.open();
      const { queueRepo } = await import('../../store/queue.ts');
      const [stats, groups] = await Promise.all([queueRepo.stats(db), queueControl.groups(null)]);
      const oldest = stats.oldestDeferred;
      const doc = {
        by_status: stats.byStatus,
        groups,
        by_destination: stats.byDestination,
        oldest_deferred: oldest && {
          email_id: oldest.email_id,
          recipient_id: oldest.id,
          address: oldest.address,
          attempts: oldest.attempts,
          first_due_at: isoOrNull(oldest.first_due_at),
          next_attempt_at: isoOrNull(oldest.due_at),
          last_response: oldest.last_response,
        },
      };
      emit(opts.json, doc, () => {
        printTable(
          Object.entries(doc.by_status).map(([status, count]) => ({ status, count })),
          ['status', 'count'],
        );
        printLines(['', 'Waiting by destination group:']);
        printTable(
          groups.map((g) => ({ ...g, limits: limits(g), state: groupState(g) })),
          ['group', 'queued', 'deferred', 'held', 'limits', 'state'],
          { wrap: ['state'] },
        );
        printLines(['', 'Unfinished by destination:']);
        printTable(doc.by_destination, ['domain', 'status', 'count']);
        const o = doc.oldest_deferred;
        printLines([
          '',
          o
            ? `Oldest deferred: email ${o.email_id} to ${o.address}, ${o.attempts} attempts since ${o.first_due_at}, next at ${o.next_attempt_at}: ${o.last_response ?? ''}`
            : 'Nothing deferred.',
        ]);
      });
    });

  queue
    .command('list')
    .description('unfinished recipients, due soonest first')
    .option('--status <list>', `comma-separated: ${STATUSES.join(',')}`, statusList)
    .option('--domain <domain>', 'only this destination domain')
    .option('--email <id>', 'only this message', positiveInt)
    .option('--limit <n>', 'at most this many rows', positiveInt, 100)
    .option('--json', 'print JSON')
    .action(async (opts: { status?: string[]; domain?: string; email?: number; limit: number; json?: boolean }) => {
      const { db } = await ctx.open();
      const { queueRepo } = await import('../../store/queue.ts');
      const rows = (await queueRepo.list(db, { status: opts.status, domain: opts.domain, messageId: opts.email, limit: opts.limit })).map(rowView);
      emit(opts.json, rows, () => printTable(rows, ['email_id', 'address', 'status', 'attempts', 'due_at', 'last_mx', 'last_response']));
    });

  queue
    .command('retry [email_ids...]')
    .description('make deferred recipients due now: of the given messages, or of one destination domain')
    .option('--domain <domain>', 'every deferred recipient at this domain')
    .option('--json', 'print JSON')
    .action(async (ids: string[], opts: { domain?: string; json?: boolean }) => {
      if (ids.length === 0 && !opts.domain) throw new Error('Name message ids or a --domain to retry');
      const { db, clock } = await ctx.open();
      const { queueRepo } = await import('../../store/queue.ts');
      const messageIds = ids.length > 0 ? ids.map((id) => positiveInt(id)) : undefined;
      const retried = await queueRepo.retryNow(db, { messageIds, domain: opts.domain }, clock.now());
      emit(opts.json, { retried }, () => printLines([`${retried} deferred recipient(s) are due now; a running server picks them up within a second.`]));
    });

  for (const action of ['hold', 'release', 'cancel'] as const) {
    const command = queue
      .command(action)
      .description(`${CONTROL[action]}; server-wide: name at least one filter`)
      .option('--domain <domain>', "recipients at this domain (the recipient's, not the sender's)")
      .option('--group <group>', 'recipients whose domain is in this destination group (queue stats lists them)')
      .option('--workspace <name>', "only this workspace's mail")
      .option('--stream <stream>', 'only this stream: transactional or broadcast', stream)
      .option('--sending-domain <domain>', 'only mail sent from this domain (a complaint-rate hold names it: docs/COMPLIANCE.md)')
      .option('--email <id>', 'only this message', positiveInt);
    if (action === 'hold') command.option('--reason <text>', 'why, shown by queue stats');
    command.option('--json', 'print JSON').action(async (opts: ControlOptions) => {
      if ([opts.domain, opts.group, opts.workspace, opts.stream, opts.sendingDomain, opts.email].every((v) => v === undefined)) {
        throw new Error('Name at least one of --domain, --group, --workspace, --stream, --sending-domain, --email: an empty filter would take the whole queue');
      }
      const { queueControl } = await ctx.open();
      const workspaceId = opts.workspace === undefined ? undefined : (await ctx.workspace(opts.workspace)).id;
      const filter = { domain: opts.domain, group: opts.group, workspaceId, stream: opts.stream, sendingDomain: opts.sendingDomain, messageId: opts.email };
      const { affected } = await named('email', opts.email ?? '', () => queueControl.serverWide(action, filter, opts.reason));
      emit(opts.json, { affected }, () => printLines([`affected ${affected}`]));
    });
  }
}
