import { api, query, type Page } from '../api.ts';
import { field, h, link, notice, replace, stamp, statusBadge, table, when } from '../dom.ts';
import type { Render } from '../routes.ts';
import type { Route, RouteAttempt } from '../types.ts';

/** Inbound routes (SPEC §14): mail for an address or pattern of a receiving domain, POSTed to a URL. */
export const routesScreen: Render = async (main) => {
  const list = await api.get<Page<Route>>('/routes');
  const status = h('div', { 'aria-live': 'polite' });
  const match = h('input', { type: 'text', name: 'match', required: true, placeholder: 'support@example.com or *+tickets@example.com' });
  const url = h('input', { type: 'url', name: 'url', required: true, placeholder: 'https://example.com/inbound' });
  const add = h('form', { class: 'inline', 'aria-label': 'Add a route' }, field('Match', match), field('Route URL', url), h('button', { type: 'submit' }, 'Add route'));
  add.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const created = await api.post<Route>('/routes', { match: match.value.trim(), url: url.value.trim() });
      replace(
        status,
        h('p', {}, `Route ${created.match} added. Its signing secret: copy it now, the list does not show it.`),
        h('p', { class: 'secret' }, created.secret),
        link(`/routes/${created.id}`, 'Open the route'),
      );
    } catch (err) {
      replace(status, notice((err as Error).message, 'error'));
    }
  });
  replace(
    main,
    h('h1', {}, 'Routes'),
    h('div', { class: 'card' }, add, status),
    list.data.length
      ? table(
          ['Match', 'URL', 'Priority', 'Status', 'Failures in a row', 'Last success'],
          list.data.map((r) => [link(`/routes/${r.id}`, r.match), r.url, String(r.priority), statusBadge(r.status), String(r.failure_count), stamp(r.last_success_at)]),
        )
      : notice('No route yet. A route takes mail for a domain that receives (its inbound MX record published).'),
  );
};

function responseBody(body: string | null | undefined): HTMLElement {
  return body ? h('pre', { class: 'response-body' }, body) : h('span', { class: 'response-body empty' }, 'empty body');
}

export const routePage: Render = async (main, params) => {
  const id = params.id!;
  const cursor = params.query.get('cursor');
  const [r, log] = await Promise.all([api.get<Route>(`/routes/${id}`), api.get<Page<RouteAttempt>>(`/routes/${id}/deliveries${query({ cursor, limit: 50 })}`)]);
  const out = h('div', { 'aria-live': 'polite' });
  const say = (...nodes: (Node | string)[]) => replace(out, ...nodes);
  const fail = (err: unknown) => say(notice((err as Error).message, 'error'));

  const rotate = h('button', { type: 'button', class: 'secondary' }, 'Rotate secret');
  rotate.addEventListener('click', async () => {
    try {
      const rotated = await api.post<Route>(`/routes/${id}/rotate-secret`);
      say(h('p', {}, 'The new signing secret. Copy it now: the console does not show it again.'), h('p', { class: 'secret' }, rotated.secret));
    } catch (err) {
      fail(err);
    }
  });
  const enable = r.status === 'active' ? null : h('button', { type: 'button', class: 'secondary' }, 'Re-enable');
  enable?.addEventListener('click', async () => {
    try {
      await api.patch(`/routes/${id}`, { status: 'active' });
      location.reload();
    } catch (err) {
      fail(err);
    }
  });

  replace(
    main,
    h('p', { class: 'crumbs' }, link('/routes', '← Routes')),
    h('h1', {}, r.match),
    h('dl', { class: 'facts' }, [
      [h('dt', {}, 'URL'), h('dd', {}, r.url)],
      [h('dt', {}, 'Priority'), h('dd', {}, String(r.priority))],
      [h('dt', {}, 'Status'), h('dd', {}, statusBadge(r.status))],
      [h('dt', {}, 'Failures in a row'), h('dd', { class: 'failure-count' }, String(r.failure_count))],
      [h('dt', {}, 'Last success'), h('dd', {}, when(r.last_success_at))],
    ]),
    h('div', { class: 'row-actions' }, rotate, enable),
    out,
    h('h2', {}, 'Delivery log'),
    log.data.length
      ? table(
          ['When', 'Received message', 'Attempt', 'Code', 'Response', 'Took'],
          log.data.map((a) => [
            stamp(a.created_at),
            `#${a.inbound_id}`,
            String(a.attempt),
            a.response_code === null ? '—' : String(a.response_code),
            responseBody(a.response_body ?? a.error),
            `${a.duration_ms} ms`,
          ]),
          'Newest first',
        )
      : notice('No delivery attempt yet.'),
    h(
      'p',
      { class: 'pager' },
      cursor ? link(`/routes/${id}`, '← Newest') : null,
      ' ',
      log.next_cursor ? link(`/routes/${id}${query({ cursor: log.next_cursor })}`, 'Older →') : null,
    ),
  );
};
