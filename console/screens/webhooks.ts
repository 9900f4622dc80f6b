import { api, query, type Page } from '../api.ts';
import { field, h, link, notice, replace, stamp, statusBadge, table, when } from '../dom.ts';
import type { Render } from '../routes.ts';
import type { Webhook, WebhookAttempt } from '../types.ts';

export const webhooksScreen: Render = async (main) => {
  const list = await api.get<Page<Webhook>>('/webhooks');
  const status = h('div', { 'aria-live': 'polite' });
  const url = h('input', { type: 'url', name: 'url', required: true, placeholder: 'https://example.com/hooks/mail' });
  const add = h('form', { class: 'inline', 'aria-label': 'Add an endpoint' }, field('Endpoint URL', url), h('button', { type: 'submit' }, 'Add endpoint'));
  add.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const created = await api.post<Webhook>('/webhooks', { url: url.value.trim() });
      location.hash = `#/webhooks/${created.id}`;
    } catch (err) {
      replace(status, notice((err as Error).message, 'error'));
    }
  });
  replace(
    main,
    h('h1', {}, 'Webhooks'),
    h('div', { class: 'card' }, add, status),
    list.data.length
      ? table(
          ['Endpoint', 'Status', 'Failures in a row', 'Last success', 'Events'],
          list.data.map((w) => [link(`/webhooks/${w.id}`, w.url), statusBadge(w.status), String(w.failure_count), stamp(w.last_success_at), w.events.join(', ')]),
        )
      : notice('No endpoint yet.'),
  );
};

/** A receiver's answer; an empty one says so in words rather than as an empty box. */
function responseBody(body: string | null | undefined): HTMLElement {
  return body ? h('pre', { class: 'response-body' }, body) : h('span', { class: 'response-body empty' }, 'empty body');
}

function attemptRows(attempts: WebhookAttempt[]) {
  return attempts.map((a) => [
    stamp(a.created_at),
    a.event,
    a.email_id ? link(`/messages/${a.email_id}`, `#${a.email_id}`) : '—',
    a.recipient ?? '—',
    String(a.attempt),
    a.response_code === null ? '—' : String(a.response_code),
    responseBody(a.response_body ?? a.error),
    `${a.duration_ms} ms`,
  ]);
}

export const webhookPage: Render = async (main, params) => {
  const id = params.id!;
  const cursor = params.query.get('cursor');
  const [w, log] = await Promise.all([api.get<Webhook>(`/webhooks/${id}`), api.get<Page<WebhookAttempt>>(`/webhooks/${id}/deliveries${query({ cursor, limit: 50 })}`)]);
  const out = h('div', { 'aria-live': 'polite' });
  const say = (...nodes: (Node | string)[]) => replace(out, ...nodes);
  const fail = (err: unknown) => say(notice((err as Error).message, 'error'));

  const test = h('button', { type: 'button' }, 'Send test event');
  test.addEventListener('click', async () => {
    try {
      const r = await api.post<{ ok: boolean; response_code: number | null; response_body: string | null; error: string | null; duration_ms: number }>(
        `/webhooks/${id}/test`,
      );
      say(
        notice(
          `Test event: ${r.ok ? 'delivered' : 'failed'}, ${r.response_code === null ? (r.error ?? 'no answer') : `HTTP ${r.response_code}`} in ${r.duration_ms} ms`,
          r.ok ? 'info' : 'error',
        ),
        ...(r.response_code === null ? [] : [responseBody(r.response_body)]),
      );
    } catch (err) {
      fail(err);
    }
  });
  const rotate = h('button', { type: 'button', class: 'secondary' }, 'Rotate secret');
  rotate.addEventListener('click', async () => {
    try {
      const r = await api.post<Webhook>(`/webhooks/${id}/rotate-secret`);
      say(h('p', {}, 'The new signing secret. Copy it now: the console does not show it again.'), h('p', { class: 'secret' }, r.secret));
    } catch (err) {
      fail(err);
    }
  });
  const enable = w.status === 'active' ? null : h('button', { type: 'button', class: 'secondary' }, 'Re-enable');
  enable?.addEventListener('click', async () => {
    try {
      await api.patch(`/webhooks/${id}`, { status: 'active' });
      location.reload();
    } catch (err) {
      fail(err);
    }
  });
  const since = h('input', { type: 'datetime-local', name: 'since', required: true, step: '1' });
  const replay = h(
    'form',
    { class: 'inline', 'aria-label': 'Replay events' },
    field('Replay events since (your local time)', since),
    h('button', { type: 'submit', class: 'secondary' }, 'Replay'),
  );
  replay.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const r = await api.post<{ queued: number }>(`/webhooks/${id}/replay`, { since: new Date(since.value).toISOString() });
      say(notice(`${r.queued} event${r.queued === 1 ? '' : 's'} queued again for this endpoint.`));
    } catch (err) {
      fail(err);
    }
  });

  replace(
    main,
    h('p', { class: 'crumbs' }, link('/webhooks', '← Webhooks')),
    h('h1', {}, w.url),
    h('dl', { class: 'facts' }, [
      [h('dt', {}, 'Status'), h('dd', {}, statusBadge(w.status))],
      [h('dt', {}, 'Failures in a row'), h('dd', { class: 'failure-count' }, String(w.failure_count))],
      [h('dt', {}, 'Last success'), h('dd', {}, when(w.last_success_at))],
      [h('dt', {}, 'Events'), h('dd', {}, w.events.join(', '))],
    ]),
    h('div', { class: 'row-actions' }, test, rotate, enable),
    replay,
    out,
    h('h2', {}, 'Delivery log'),
    log.data.length
      ? table(['When', 'Event', 'Message', 'Recipient', 'Attempt', 'Code', 'Response', 'Took'], attemptRows(log.data), 'Newest first')
      : notice('No delivery attempt yet.'),
    h(
      'p',
      { class: 'pager' },
      cursor ? link(`/webhooks/${id}`, '← Newest') : null,
      ' ',
      log.next_cursor ? link(`/webhooks/${id}${query({ cursor: log.next_cursor })}`, 'Older →') : null,
    ),
  );
};
