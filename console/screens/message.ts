import { api } from '../api.ts';
import { h, link, replace, statusBadge, table, when } from '../dom.ts';
import type { Render } from '../routes.ts';
import type { Email } from '../types.ts';

function eventLine(e: Email['events'][number]): HTMLElement {
  const provider = e.provider ?? {};
  return h(
    'li',
    {},
    h('time', { datetime: e.occurred_at }, when(e.occurred_at)),
    ' ',
    h('strong', { class: 'event' }, e.event),
    ' ',
    e.recipient,
    e.bounce_type ? h('span', { class: 'bounce-type' }, ` (${e.bounce_type})`) : null,
    e.url ? h('div', { class: 'muted' }, `link: ${e.url}`) : null,
    provider.response ? h('div', { class: 'provider' }, `${provider.reporting_mta ?? ''}: ${provider.response}`) : null,
  );
}

export const messagePage: Render = async (main, params) => {
  const m = await api.get<Email>(`/emails/${params.id}`);
  const facts: [string, string | HTMLElement][] = [
    ['Status', statusBadge(m.status)],
    ['Stream', m.stream],
    ['From', m.from],
    ['To', m.to.join(', ')],
    ...(m.cc.length ? [['Cc', m.cc.join(', ')] as [string, string]] : []),
    ...(m.bcc.length ? [['Bcc', m.bcc.join(', ')] as [string, string]] : []),
    ['Created', when(m.created_at)],
    ...(m.scheduled_at ? [['Scheduled', when(m.scheduled_at)] as [string, string]] : []),
    ['Message-ID', m.message_id ?? '—'],
  ];
  replace(
    main,
    h('p', { class: 'crumbs' }, link('/messages', '← Messages')),
    h('h1', { class: 'subject' }, m.subject),
    h('dl', { class: 'facts' }, facts.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    h('section', { 'aria-labelledby': 'recipients-title' }, h('h2', { id: 'recipients-title' }, 'Recipients'),
      table(['Address', 'Status', 'Attempts', 'Last reply', 'Updated'], m.recipients.map((r) => [r.address, statusBadge(r.status), String(r.attempts), h('span', { class: 'reply' }, r.last_response ?? '—'), when(r.updated_at)]))),
    h('section', { 'aria-labelledby': 'events-title' }, h('h2', { id: 'events-title' }, 'Events'),
      m.events.length ? h('ol', { class: 'timeline' }, m.events.map(eventLine)) : h('p', { class: 'muted' }, 'No event yet.')),
  );
};
