import { api } from '../api.ts';
import { h, link, replace, stamp, statusBadge, table, when } from '../dom.ts';
import type { Render } from '../routes.ts';
import type { Email, EmailContent } from '../types.ts';

/**
 * The policy inside the preview frame, on top of the page's: no script, no remote image, font or
 * stylesheet (a remote load would tell the sender the message was opened, and where).
 */
const FRAME_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'";

/**
 * The message's HTML in a frame with no script, no origin of its own (so it cannot read the
 * console's cookies or call its API) and no remote loads (a tracking pixel would tell the sender).
 * The HTML is set as the frame's document source (srcdoc), never parsed into the console's page.
 */
export function htmlFrame(html: string, title = 'HTML part of the message'): HTMLIFrameElement {
  const frame = h('iframe', { class: 'email-html', title, sandbox: '', referrerpolicy: 'no-referrer' });
  frame.srcdoc = `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${FRAME_CSP}"><base target="_blank">${html}`;
  return frame;
}

export function contentSection(c: EmailContent): HTMLElement {
  if (!c.available) return h('p', { class: 'muted' }, 'The body of this message was removed by retention; its status and events remain.');
  return h(
    'div',
    {},
    h('h3', {}, 'Headers'),
    table(
      ['Field', 'Value'],
      c.headers.map((f) => [h('span', { class: 'nowrap' }, f.name), h('span', { class: 'header-value' }, f.value)]),
    ),
    c.html !== null ? [h('h3', {}, 'HTML'), htmlFrame(c.html)] : null,
    c.text !== null ? [h('h3', {}, 'Text'), h('pre', { class: 'text-part' }, c.text)] : null,
    h('details', {}, h('summary', {}, 'Raw MIME'), h('pre', { class: 'raw' }, c.raw ?? '')),
  );
}

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
  const [m, content] = await Promise.all([api.get<Email>(`/emails/${params.id}`), api.get<EmailContent>(`/emails/${params.id}/content`)]);
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
    h(
      'dl',
      { class: 'facts' },
      facts.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
    ),
    h(
      'section',
      { 'aria-labelledby': 'recipients-title' },
      h('h2', { id: 'recipients-title' }, 'Recipients'),
      // The sending address a recipient went out from, when the server has several (delivery.sourceAddresses).
      m.recipients.some((r) => r.source_address)
        ? table(
            ['Address', 'Status', 'Attempts', 'Sent from', 'Last reply', 'Updated'],
            m.recipients.map((r) => [
              r.address,
              statusBadge(r.status),
              String(r.attempts),
              r.source_address ?? '—',
              h('span', { class: 'reply' }, r.last_response ?? '—'),
              stamp(r.updated_at),
            ]),
          )
        : table(
            ['Address', 'Status', 'Attempts', 'Last reply', 'Updated'],
            m.recipients.map((r) => [r.address, statusBadge(r.status), String(r.attempts), h('span', { class: 'reply' }, r.last_response ?? '—'), stamp(r.updated_at)]),
          ),
    ),
    h(
      'section',
      { 'aria-labelledby': 'events-title' },
      h('h2', { id: 'events-title' }, 'Events'),
      m.events.length ? h('ol', { class: 'timeline' }, m.events.map(eventLine)) : h('p', { class: 'muted' }, 'No event yet.'),
    ),
    h('section', { 'aria-labelledby': 'content-title' }, h('h2', { id: 'content-title' }, 'Message'), contentSection(content)),
  );
};
