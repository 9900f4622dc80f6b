import { api, query, type Page, type Session } from '../api.ts';
import { field, h, link, notice, replace, select, stamp, table, when } from '../dom.ts';
import type { Render } from '../routes.ts';
import type { Suppression, SuppressionCause } from '../types.ts';

const STREAMS: [string, string][] = [
  ['transactional', 'transactional'],
  ['broadcast', 'broadcast'],
];

const REASONS: Record<string, string> = {
  bounce: 'permanent bounce',
  complaint: 'spam complaint',
  unsubscribe: 'unsubscribed',
  manual: 'added by hand',
};

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const a = h('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The report behind an entry, loaded when opened: the server's words and the classifier's reading. */
function causeOf(s: Suppression): HTMLElement {
  const body = h('div', { class: 'cause' }, 'Loading…');
  const details = h('details', {}, h('summary', {}, 'Report'), body);
  details.addEventListener('toggle', async () => {
    if (!details.open || details.dataset.loaded) return;
    details.dataset.loaded = 'yes';
    try {
      const { cause } = await api.get<Suppression & { cause: SuppressionCause | null }>(`/suppressions/${encodeURIComponent(s.stream)}/${encodeURIComponent(s.address)}`);
      if (!cause) return replace(body, 'No report kept (retention removed it).');
      replace(
        body,
        h(
          'dl',
          { class: 'facts' },
          h('dt', {}, 'Event'),
          h('dd', {}, `${cause.event} at ${when(cause.occurred_at)}`),
          cause.bounce_type
            ? [h('dt', {}, 'Bounce'), h('dd', {}, `${cause.bounce_type}${cause.reason ? `: ${cause.reason}` : ''}${cause.status ? ` (${cause.status})` : ''}`)]
            : null,
          cause.feedback_type ? [h('dt', {}, 'Feedback type'), h('dd', {}, cause.feedback_type)] : null,
          h('dt', {}, 'Reported by'),
          h('dd', {}, cause.reporting_mta || '—'),
          h('dt', {}, 'Their words'),
          h('dd', { class: 'reply' }, cause.response || '—'),
          cause.decided_by.length
            ? [
                h('dt', {}, 'Why this type'),
                h(
                  'dd',
                  {},
                  h(
                    'ul',
                    {},
                    cause.decided_by.map((d) => h('li', {}, d)),
                  ),
                ),
              ]
            : null,
        ),
      );
    } catch (err) {
      replace(body, notice((err as Error).message, 'error'));
    }
  });
  return details;
}

export const suppressionsScreen: Render = async (main, params, session: Session) => {
  const q = params.query;
  const stream = q.get('stream') === 'broadcast' ? 'broadcast' : 'transactional';
  const search = q.get('search') ?? '';
  const cursor = q.get('cursor');
  const canChange = session.scope === 'workspace';
  const status = h('div', { 'aria-live': 'polite' });

  const streamSelect = select('stream', STREAMS, stream);
  const searchInput = h('input', { type: 'search', name: 'search', value: search, placeholder: 'part of an address' });
  const filter = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Search suppressions' },
    field('Stream', streamSelect),
    field('Address contains', searchInput),
    h('button', { type: 'submit' }, 'Search'),
  );
  filter.addEventListener('submit', (e) => {
    e.preventDefault();
    location.hash = `#/suppressions${query({ stream: streamSelect.value, search: searchInput.value.trim() })}`;
  });

  const remove = (s: Suppression) => {
    const b = h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${s.address}` }, 'Remove');
    b.addEventListener('click', async () => {
      // Two clicks, no dialog: the second confirms.
      if (b.dataset.armed !== 'yes') {
        b.dataset.armed = 'yes';
        b.textContent = 'Confirm removal';
        return;
      }
      await api.delete(`/suppressions/${encodeURIComponent(s.stream)}/${encodeURIComponent(s.address)}`);
      replace(status, notice(`${s.address} was removed from ${s.stream}.`));
      void render();
    });
    return b;
  };
  const rowOf = (s: Suppression) => [
    s.address,
    REASONS[s.reason] ?? s.reason,
    s.email_id ? [link(`/messages/${s.email_id}`, `message #${s.email_id}`), causeOf(s)] : '—',
    stamp(s.created_at),
    canChange ? remove(s) : '',
  ];

  const address = h('input', { type: 'email', name: 'address', required: true, placeholder: 'someone@example.com' });
  const add = h('form', { class: 'inline', 'aria-label': 'Add a suppression' }, field(`Add to ${stream}`, address), h('button', { type: 'submit' }, 'Add'));
  add.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await api.post('/suppressions', { address: address.value.trim(), stream });
      replace(status, notice(`${address.value.trim()} is suppressed on ${stream}.`));
      address.value = '';
      void render();
    } catch (err) {
      replace(status, notice((err as Error).message, 'error'));
    }
  });

  const file = h('input', { type: 'file', name: 'csv', accept: '.csv,text/csv' });
  const importForm = h(
    'form',
    { class: 'inline', 'aria-label': 'Import suppressions' },
    field('Import CSV (header row with address)', file),
    h('button', { type: 'submit', class: 'secondary' }, 'Import'),
  );
  importForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const chosen = file.files?.[0];
    if (!chosen) return replace(status, notice('Choose a CSV file first.', 'error'));
    try {
      const r = await api.post<{ added: number; existing: number; problems: { line: number; error: string }[] }>('/suppressions/import', {
        csv: await chosen.text(),
        stream,
      });
      replace(
        status,
        notice(`Imported: ${r.added} added, ${r.existing} already listed, ${r.problems.length} skipped.`),
        r.problems.length
          ? h(
              'ul',
              {},
              r.problems.slice(0, 20).map((p) => h('li', {}, `line ${p.line}: ${p.error}`)),
            )
          : null,
      );
      void render();
    } catch (err) {
      replace(status, notice((err as Error).message, 'error'));
    }
  });
  const exportButton = h('button', { type: 'button', class: 'secondary' }, 'Export CSV');
  exportButton.addEventListener('click', async () => {
    const r = await api.get<{ count: number; csv: string }>(`/suppressions/export${query({ stream })}`);
    download(`suppressions-${stream}.csv`, r.csv);
    replace(status, notice(`Exported ${r.count} ${r.count === 1 ? 'entry' : 'entries'}.`));
  });

  const results = h('div', {});
  const render = async () => renderRows(await api.get<Page<Suppression>>(`/suppressions${query({ stream, search, cursor, limit: 50 })}`));
  const renderRows = (p: Page<Suppression>) => {
    const r = p.data.map(rowOf);
    replace(
      results,
      r.length
        ? table(['Address', 'Why', 'Caused by', 'Since', ''], r, `${stream} suppression list`)
        : notice(search ? 'No suppressed address matches.' : 'This list is empty.'),
      h(
        'p',
        { class: 'pager' },
        cursor ? link(`/suppressions${query({ stream, search })}`, '← First page') : null,
        ' ',
        p.next_cursor ? link(`/suppressions${query({ stream, search, cursor: p.next_cursor })}`, 'Next page →') : null,
      ),
    );
  };
  await render();
  replace(
    main,
    h('h1', {}, 'Suppressions'),
    h(
      'p',
      { class: 'muted' },
      "Mail to an address on a stream's list is recorded as suppressed and never attempted. Entries caused by a bounce, complaint or unsubscribe link to the message and open the report that listed them.",
    ),
    filter,
    canChange ? h('div', { class: 'card' }, add, importForm, h('div', { class: 'row-actions' }, exportButton)) : h('div', { class: 'row-actions' }, exportButton),
    status,
    results,
  );
};
