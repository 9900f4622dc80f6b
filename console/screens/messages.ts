import { api, query, type Page } from '../api.ts';
import { field, h, link, notice, replace, select, stamp, statusBadge, table } from '../dom.ts';
import type { Render } from '../routes.ts';
import type { EmailSummary } from '../types.ts';

const STATUSES = ['held', 'scheduled', 'queued', 'sending', 'deferred', 'delivered', 'partial', 'bounced', 'failed', 'suppressed', 'canceled'];
/**
 * The first page refreshes itself often for a minute after it is opened or looked at again, so
 * new mail appears within 2 s while someone watches, then slowly: its requests count against the
 * key's rate limit, and a tab left open must not spend the hour's allowance.
 */
const LIVE_MS = 1500;
const LIVE_FOR_MS = 60_000;
const IDLE_MS = 15_000;

/** The search fields the URL keeps (`#/messages?subject=...`), so a search can be shared. */
const SEARCH = ['status', 'stream', 'recipient', 'from', 'subject', 'tag', 'metadata', 'after', 'before'] as const;
type Search = Record<(typeof SEARCH)[number], string>;

/** A day of the date inputs as the moment it starts here, in ISO 8601 (the API wants a zone). */
const dayStart = (day: string, plusDays = 0): string | undefined => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  return m ? new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + plusDays).toISOString() : undefined;
};

/** The `GET /emails` parameters of a search: `metadata` is `key=value`, the dates are whole local days. */
function apiSearch(s: Search): Record<string, string | undefined> {
  const eq = s.metadata.indexOf('=');
  const metadata = s.metadata === '' ? {} : eq < 0 ? { [`metadata.${s.metadata}`]: '' } : { [`metadata.${s.metadata.slice(0, eq).trim()}`]: s.metadata.slice(eq + 1) };
  return {
    status: s.status,
    stream: s.stream,
    recipient: s.recipient,
    from: s.from,
    subject: s.subject,
    tag: s.tag,
    ...metadata,
    created_after: dayStart(s.after),
    created_before: dayStart(s.before, 1),
  };
}

export const messageList: Render = async (main, params) => {
  const q = params.query;
  const filters = Object.fromEntries(SEARCH.map((k) => [k, q.get(k) ?? ''])) as Search;
  const cursor = q.get('cursor');

  const status = select('status', [['', 'Any status'], ...STATUSES.map((s): [string, string] => [s, s])], filters.status);
  const stream = select(
    'stream',
    [
      ['', 'Both streams'],
      ['transactional', 'transactional'],
      ['broadcast', 'broadcast'],
    ],
    filters.stream,
  );
  const text = (name: keyof Search, type: string, placeholder = '') => h('input', { type, name, value: filters[name], placeholder });
  const inputs = {
    recipient: text('recipient', 'search', 'someone@example.com'),
    from: text('from', 'search', 'news@your-domain.com'),
    subject: text('subject', 'search', 'words in the subject'),
    tag: text('tag', 'search', 'name or name:value'),
    metadata: text('metadata', 'search', 'key=value'),
    after: text('after', 'date'),
    before: text('before', 'date'),
  };
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter messages' },
    field('Status', status),
    field('Stream', stream),
    field('Recipient', inputs.recipient),
    field('From', inputs.from),
    field('Subject', inputs.subject),
    field('Tag', inputs.tag),
    field('Metadata', inputs.metadata),
    field('Created from', inputs.after),
    field('Created to', inputs.before),
    h('button', { type: 'submit' }, 'Search'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const typed = Object.fromEntries(Object.entries(inputs).map(([k, el]) => [k, el.value.trim()]));
    location.hash = `#/messages${query({ status: status.value, stream: stream.value, ...typed })}`;
  });

  const results = h('div', { 'aria-live': 'polite' });
  replace(main, h('h1', {}, 'Messages'), form, results);

  const load = async () => {
    const page = await api.get<Page<EmailSummary>>(`/emails${query({ ...apiSearch(filters), cursor, limit: 50 })}`);
    const rows = page.data.map((m) => [
      link(`/messages/${m.id}`, `#${m.id}`),
      h('span', { class: 'subject' }, m.subject),
      m.to.concat(m.cc, m.bcc).join(', '),
      statusBadge(m.status),
      m.stream,
      stamp(m.created_at),
    ]);
    const next = page.next_cursor ? link(`/messages${query({ ...filters, cursor: page.next_cursor })}`, 'Older messages →') : null;
    replace(
      results,
      rows.length
        ? table(['Id', 'Subject', 'Recipients', 'Status', 'Stream', 'Created'], rows, cursor ? 'Older messages' : 'Newest first')
        : notice('No message matches.'),
      h('p', { class: 'pager' }, cursor ? link(`/messages${query(filters)}`, '← Newest') : null, ' ', next),
    );
  };
  await load();
  if (cursor) return;
  // Only the newest page moves; a later page is a fixed slice of the past.
  let stopped = false;
  let timer = 0;
  let liveUntil = Date.now() + LIVE_FOR_MS;
  const tick = async () => {
    if (stopped) return;
    let wait = Date.now() < liveUntil ? LIVE_MS : IDLE_MS;
    // A failed refresh (the rate limit, the server restarting) backs off instead of insisting.
    if (document.visibilityState === 'visible') await load().catch(() => (wait = IDLE_MS));
    if (!stopped) timer = window.setTimeout(tick, wait);
  };
  const watched = () => {
    if (document.visibilityState !== 'visible') return;
    const wasIdle = Date.now() >= liveUntil;
    liveUntil = Date.now() + LIVE_FOR_MS;
    if (wasIdle && !stopped) {
      clearTimeout(timer);
      timer = window.setTimeout(tick, 0);
    }
  };
  document.addEventListener('visibilitychange', watched);
  main.addEventListener('pointerdown', watched);
  timer = window.setTimeout(tick, LIVE_MS);
  return () => {
    stopped = true;
    clearTimeout(timer);
    document.removeEventListener('visibilitychange', watched);
    main.removeEventListener('pointerdown', watched);
  };
};
