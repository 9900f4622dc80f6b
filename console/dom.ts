/**
 * The one way the console builds markup: elements and text nodes. Strings always become text
 * (textContent), never HTML, so a subject, an address or a provider's reply cannot inject markup.
 */
export type Child = Node | string | number | null | undefined | false | Child[];
type Handler = (event: Event) => void;
export type Attrs = Record<string, string | number | boolean | null | undefined | Handler>;

function append(parent: Node, child: Child): void {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) for (const c of child) append(parent, c);
  else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
}

function setAttrs(el: Element, attrs: Attrs): void {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';

export function svg(tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG, tag) as SVGElement;
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A link to a console route; `to` is built by the console, never taken from a response. */
export const link = (to: string, ...children: Child[]) => h('a', { href: `#${to}` }, ...children);

export const when = (iso: string | null | undefined): string => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '—');

/**
 * `when` for a table cell: the date and the time may go on two lines, but neither is broken at
 * its hyphens or colons (a narrow column would show "2026-11-" over "26").
 */
export function stamp(iso: string | null | undefined): Child {
  if (!iso) return '—';
  const [day, time] = when(iso).split(' ');
  return h('time', { datetime: iso, class: 'stamp' }, h('span', {}, day), ' ', h('span', {}, time));
}

export function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge badge-${/^[a-z_]+$/.test(status) ? status : 'other'}` }, status);
}

/** A labelled form control; each input gets an id so its label is announced. */
let ids = 0;
export function field(label: string, control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement): HTMLElement {
  control.id ||= `f${++ids}`;
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control);
}

export function select(name: string, options: [string, string][], value = ''): HTMLSelectElement {
  const el = h('select', { name });
  for (const [v, text] of options) el.append(h('option', { value: v, selected: v === value }, text));
  return el;
}

/** Scrolls sideways on a narrow screen; focusable so a keyboard can scroll it too. */
export const scroller = (label: string, ...children: Child[]) => h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': label }, ...children);

export function table(headings: string[], rows: Child[][], caption?: string): HTMLElement {
  return scroller(
    caption ?? `Table: ${headings.filter(Boolean).join(', ')}`,
    h(
      'table',
      {},
      caption ? h('caption', {}, caption) : null,
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headings.map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((cells) =>
          h(
            'tr',
            {},
            cells.map((c) => h('td', {}, c)),
          ),
        ),
      ),
    ),
  );
}

/** A message in the page's live region (status or error). */
export function notice(text: string, kind: 'info' | 'error' = 'info'): HTMLElement {
  return h('p', { class: `notice notice-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

export function copyButton(text: string, label: string): HTMLElement {
  const button = h('button', { type: 'button', class: 'secondary', 'aria-label': label }, 'Copy');
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Select and copy';
    }
  });
  return button;
}
