import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { isoOrNull } from '../../core/time.ts';
import { UNFINISHED_STATUSES } from '../../messages/status.ts';
import type { RecipientRow } from '../../store/messages.ts';
import type { CliContext } from '../context.ts';
import { positiveInt } from '../context.ts';
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
  const queue = program.command('queue').description('the delivery queue: counts, pending recipients, retry now');

  queue
    .command('stats')
    .description('recipients by status, unfinished ones by destination domain, the oldest deferred')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const { db } = await ctx.open();
      const { queueRepo } = await import('../../store/queue.ts');
      const stats = await queueRepo.stats(db);
      const oldest = stats.oldestDeferred;
      const doc = {
        by_status: stats.byStatus,
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
}
