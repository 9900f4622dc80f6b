import { api } from '../api.ts';
import { h, notice, replace, table, when } from '../dom.ts';
import type { Render } from '../routes.ts';
import type { QueueGroup, QueueStats } from '../types.ts';

/** A group's limits in a few words. */
const limits = (g: QueueGroup) => `${g.connections} connections, ${g.per_minute === null ? 'no rate limit' : `${g.per_minute} a minute`}`;

/** Why the group is not sending, if it is not; `open` when it is. */
function state(g: QueueGroup): string {
  const states = [
    ...(g.on_hold ? [`on hold${g.hold_reason ? `: ${g.hold_reason}` : ''}`] : []),
    ...(g.suspended_until ? [`suspended until ${when(g.suspended_until)}${g.reason ? `: ${g.reason}` : ''}`] : []),
  ];
  return states.length > 0 ? states.join('; ') : 'open';
}

const plural = (n: number) => `${n} recipient${n === 1 ? '' : 's'}`;

/**
 * The queue by destination group (`GET /stats/queue`), with Hold and Release per group
 * (`POST /queue/hold`, `/queue/release`): a hold stands until released, so mail accepted later
 * for the group waits too.
 */
export const queueScreen: Render = async (main) => {
  const out = h('div', { 'aria-live': 'polite' });
  const groups = h('div', {});
  const totals = h('dl', { class: 'facts' });

  const act = async (action: 'hold' | 'release', group: string) => {
    try {
      const { affected } = await api.post<{ affected: number }>(`/queue/${action}`, { group });
      replace(
        out,
        notice(
          action === 'hold'
            ? `${group} is on hold: ${plural(affected)} held; mail for it accepted from now on waits too.`
            : `${group} is released: ${plural(affected)} due now.`,
        ),
      );
      await draw();
    } catch (err) {
      replace(out, notice((err as Error).message, 'error'));
    }
  };
  const button = (action: 'hold' | 'release', g: QueueGroup) => {
    const word = action === 'hold' ? 'Hold' : 'Release';
    const b = h('button', { type: 'button', class: action === 'hold' ? 'secondary' : null, 'aria-label': `${word} ${g.group}` }, word);
    b.addEventListener('click', () => void act(action, g.group));
    return b;
  };

  const draw = async () => {
    const q = await api.get<QueueStats>('/stats/queue');
    replace(
      totals,
      h('dt', {}, 'Queued, deferred, held'),
      h('dd', { class: 'queue-totals' }, `${q.queued}, ${q.deferred}, ${q.held}`),
      h('dt', {}, 'Sending, scheduled'),
      h('dd', {}, `${q.sending}, ${q.scheduled}`),
    );
    replace(
      groups,
      q.groups.length
        ? table(
            ['Group', 'Queued', 'Deferred', 'Held', 'Limits', 'State', ''],
            q.groups.map((g) => [
              g.group,
              String(g.queued),
              String(g.deferred),
              String(g.held),
              limits(g),
              state(g),
              h('div', { class: 'row-actions' }, button('hold', g), button('release', g)),
            ]),
            'Waiting mail by destination group',
          )
        : notice('Nothing is waiting to be sent.'),
    );
  };

  await draw();
  replace(
    main,
    h('h1', {}, 'Queue'),
    h(
      'p',
      {},
      'Mail waiting to be sent, by destination group: recipient domains that share mail servers share one queue and one set of limits. ' +
        'Hold keeps a group’s mail, including mail sent later, until you release it; released mail is sent at once.',
    ),
    totals,
    out,
    groups,
  );
};
