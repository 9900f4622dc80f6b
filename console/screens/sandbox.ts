import { api, query, type Page } from '../api.ts';
import { h, link, notice, replace, stamp, statusBadge, table, when } from '../dom.ts';
import type { Render } from '../routes.ts';
import type { Capture, EmailContent } from '../types.ts';
import { contentSection } from './message.ts';

export const sandboxScreen: Render = async (main, params) => {
  const cursor = params.query.get('cursor');
  const page = await api.get<Page<Capture>>(`/sandbox/messages${query({ cursor, limit: 50 })}`);
  replace(
    main,
    h('h1', {}, 'Sandbox inbox'),
    h('p', { class: 'muted' }, "The server runs in sandbox mode: nothing leaves it. Each recipient's copy is kept here, exactly as it would have been sent."),
    page.data.length
      ? table(
          ['Received', 'To', 'Subject', 'Outcome', 'DKIM'],
          page.data.map((c) => [stamp(c.captured_at), c.recipient, link(`/sandbox/${c.id}`, c.subject || '(no subject)'), statusBadge(c.outcome), c.dkim.result]),
        )
      : notice('No captured message yet.'),
    h(
      'p',
      { class: 'pager' },
      cursor ? link('/sandbox', '← Newest') : null,
      ' ',
      page.next_cursor ? link(`/sandbox${query({ cursor: page.next_cursor })}`, 'Older →') : null,
    ),
  );
};

export const capturePage: Render = async (main, params) => {
  const [c, content] = await Promise.all([api.get<Capture>(`/sandbox/messages/${params.id}`), api.get<EmailContent>(`/sandbox/messages/${params.id}/content`)]);
  replace(
    main,
    h('p', { class: 'crumbs' }, link('/sandbox', '← Sandbox inbox')),
    h('h1', { class: 'subject' }, c.subject || '(no subject)'),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'To'),
      h('dd', {}, c.recipient),
      h('dt', {}, 'Envelope'),
      h('dd', {}, `MAIL FROM:<${c.envelope.mail_from}> RCPT TO:<${c.envelope.rcpt_to}>`),
      h('dt', {}, 'Outcome'),
      h('dd', {}, statusBadge(c.outcome), ' ', h('span', { class: 'reply' }, c.response)),
      h('dt', {}, 'DKIM'),
      h('dd', {}, `${c.dkim.result} ${c.dkim.detail}`),
      h('dt', {}, 'Message'),
      h('dd', {}, link(`/messages/${c.email_id}`, `#${c.email_id}`)),
      h('dt', {}, 'Received'),
      h('dd', {}, when(c.captured_at)),
    ),
    contentSection(content),
  );
};
