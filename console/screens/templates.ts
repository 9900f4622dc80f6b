import { api, query, type Page } from '../api.ts';
import { field, h, link, notice, replace, stamp, table, when } from '../dom.ts';
import type { Render } from '../routes.ts';
import type { RenderedTemplate, Template } from '../types.ts';
import { htmlFrame } from './message.ts';

/** Stored templates (SPEC §15): a send names one and gives its variables instead of a subject and body. */
export const templatesScreen: Render = async (main, params) => {
  const cursor = params.query.get('cursor');
  const list = await api.get<Page<Template>>(`/templates${query({ cursor, limit: 50 })}`);
  replace(
    main,
    h('h1', {}, 'Templates'),
    list.data.length
      ? table(
          ['Name', 'Subject', 'Variables', 'Updated'],
          list.data.map((t) => [link(`/templates/${t.id}`, t.name), t.subject, t.variables.join(', ') || '—', stamp(t.updated_at)]),
          'Newest first',
        )
      : notice('No template yet. Create one with POST /api/v1/templates; a send then names it with `template` and gives its `variables`.'),
    h(
      'p',
      { class: 'pager' },
      cursor ? link('/templates', '← Newest') : null,
      ' ',
      list.next_cursor ? link(`/templates${query({ cursor: list.next_cursor })}`, 'Older templates →') : null,
    ),
  );
};

/** `user.first` = "Ann" as `{user: {first: "Ann"}}`, the shape a send's `variables` takes. */
function variablesOf(inputs: [string, HTMLInputElement][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, input] of inputs) {
    const path = name.split('.');
    let node = out;
    for (const segment of path.slice(0, -1)) {
      const next = node[segment];
      node = (node[segment] = typeof next === 'object' && next !== null ? next : {}) as Record<string, unknown>;
    }
    node[path[path.length - 1]!] = input.value;
  }
  return out;
}

function preview(r: RenderedTemplate): HTMLElement {
  return h(
    'div',
    { class: 'template-preview' },
    h('h3', {}, 'Subject'),
    h('p', { class: 'rendered-subject' }, r.subject),
    r.html !== null ? [h('h3', {}, 'HTML'), htmlFrame(r.html, 'HTML part of the preview')] : null,
    r.text !== null ? [h('h3', {}, 'Text'), h('pre', { class: 'text-part' }, r.text)] : null,
  );
}

export const templatePage: Render = async (main, params) => {
  const t = await api.get<Template>(`/templates/${params.id}`);
  const inputs = t.variables.map((name): [string, HTMLInputElement] => [name, h('input', { type: 'text', name })]);
  const out = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'inline', 'aria-label': 'Variables for the preview' },
    inputs.map(([name, input]) => field(name, input)),
    h('button', { type: 'submit' }, 'Preview'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      replace(out, preview(await api.post<RenderedTemplate>(`/templates/${t.id}/render`, { variables: variablesOf(inputs) })));
    } catch (err) {
      replace(out, notice((err as Error).message, 'error'));
    }
  });
  replace(
    main,
    h('p', { class: 'crumbs' }, link('/templates', '← Templates')),
    h('h1', {}, t.name),
    h('dl', { class: 'facts' }, [
      [h('dt', {}, 'Subject'), h('dd', {}, t.subject)],
      [h('dt', {}, 'Variables'), h('dd', {}, t.variables.join(', ') || 'none')],
      [h('dt', {}, 'Created'), h('dd', {}, when(t.created_at))],
      [h('dt', {}, 'Updated'), h('dd', {}, when(t.updated_at))],
    ]),
    h(
      'section',
      { 'aria-labelledby': 'source-title' },
      h('h2', { id: 'source-title' }, 'Source'),
      t.html !== null ? h('details', {}, h('summary', {}, 'HTML'), h('pre', { class: 'raw' }, t.html)) : null,
      t.text !== null ? h('details', {}, h('summary', {}, 'Text'), h('pre', { class: 'raw' }, t.text)) : null,
    ),
    h('section', { 'aria-labelledby': 'preview-title', class: 'card' }, h('h2', { id: 'preview-title' }, 'Preview'), form, out),
  );
};
