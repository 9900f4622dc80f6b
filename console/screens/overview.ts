import { api } from '../api.ts';
import { lineChart } from '../chart.ts';
import { h, link, replace, statusBadge, table, when } from '../dom.ts';
import type { Render } from '../routes.ts';
import type { DayStats, QueueStats, Reputation } from '../types.ts';

// Colours chosen to stay distinct for the common colour-vision deficiencies (Okabe-Ito).
const COLORS = {
  sent: '#0072b2',
  delivered: '#009e73',
  permanent: '#d55e00',
  transient: '#e69f00',
  blocked: '#cc79a7',
  complained: '#000000',
  opened: '#56b4e9',
  clicked: '#009e73',
};

function age(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}

/** When the next deferred recipient is tried, and how far off that is by this browser's clock. */
function nextRetry(at: string | null): string {
  if (at === null) return '—';
  const seconds = Math.round((Date.parse(at) - Date.now()) / 1000);
  return seconds > 0 ? `${when(at)} (in ${age(seconds)})` : `${when(at)} (due now)`;
}

const percent = (rate: number | null) => (rate === null ? '—' : `${rate}%`);

/** Each sending domain's complaint rate over 7 days with its level, and a broadcast stream the rate holds. */
function complaintRates(rep: Reputation): HTMLElement {
  const { warning, critical, pause_broadcast_at: pauseAt } = rep.thresholds;
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'reputation-title' },
    h('h2', { id: 'reputation-title' }, 'Complaint rate, last 7 days'),
    h(
      'p',
      {},
      `Complaints ÷ delivered: warning from ${warning}%, critical from ${critical}% (Google's limits).`,
      pauseAt === null ? '' : ` At ${pauseAt}% a domain's broadcast mail is held until an operator releases it.`,
    ),
    rep.domains.length === 0
      ? h('p', { class: 'reputation-empty' }, 'Nothing delivered in the last 7 days.')
      : table(
          ['Domain', 'Stream', 'Delivered', 'Complaints', 'Rate', 'Level'],
          rep.domains.map((d) => [
            d.domain,
            d.stream,
            String(d.delivered),
            String(d.complained),
            percent(d.rate),
            h('span', {}, statusBadge(d.level), d.held ? [' ', statusBadge('held')] : []),
          ]),
          'Complaint rate per sending domain and stream',
        ),
  );
}

export const overviewScreen: Render = async (main) => {
  const [daily, queue, reputation] = await Promise.all([
    api.get<{ from: string; to: string; data: DayStats[] }>('/stats/daily?days=30'),
    api.get<QueueStats>('/stats/queue'),
    api.get<Reputation>('/stats/reputation'),
  ]);
  const charts = ['transactional', 'broadcast'].flatMap((stream) => {
    const rows = daily.data.filter((r) => r.stream === stream);
    const days = rows.map((r) => r.day);
    const pick = (f: (r: DayStats) => number) => rows.map(f);
    return [
      lineChart(`${stream}: delivery`, days, [
        { name: 'sent', color: COLORS.sent, values: pick((r) => r.sent) },
        { name: 'delivered', color: COLORS.delivered, values: pick((r) => r.delivered) },
        { name: 'bounced (permanent)', color: COLORS.permanent, values: pick((r) => r.bounced.permanent) },
        { name: 'bounced (transient)', color: COLORS.transient, values: pick((r) => r.bounced.transient) },
        { name: 'bounced (blocked)', color: COLORS.blocked, values: pick((r) => r.bounced.blocked) },
        { name: 'complained', color: COLORS.complained, values: pick((r) => r.complained) },
      ]),
      lineChart(`${stream}: engagement`, days, [
        { name: 'opened', color: COLORS.opened, values: pick((r) => r.opened) },
        { name: 'clicked', color: COLORS.clicked, values: pick((r) => r.clicked) },
      ]),
    ];
  });
  const deferred = queue.deferred;
  replace(
    main,
    h('h1', {}, 'Overview'),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'queue-title' },
      h('h2', { id: 'queue-title' }, 'Queue'),
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Deferred (waiting for a retry)'),
        h('dd', { class: 'deferred-count' }, deferred ? link('/messages?status=deferred', String(deferred)) : '0'),
        h('dt', {}, 'Oldest deferred'),
        h(
          'dd',
          { class: 'oldest-deferred' },
          queue.oldest_deferred_age_seconds === null ? '—' : `waiting ${age(queue.oldest_deferred_age_seconds)}, since ${when(queue.oldest_deferred_since)}`,
        ),
        h('dt', {}, 'Next retry'),
        h('dd', { class: 'next-retry' }, nextRetry(queue.next_retry_at)),
        h('dt', {}, 'Queued, sending, scheduled'),
        h('dd', {}, `${queue.queued}, ${queue.sending}, ${queue.scheduled}`),
      ),
    ),
    complaintRates(reputation),
    h('h2', {}, `Last 30 days (${daily.from} to ${daily.to}, UTC)`),
    h('div', { class: 'charts' }, charts),
  );
};
