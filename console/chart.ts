import { h, scroller, svg } from './dom.ts';

export interface Series {
  name: string;
  color: string;
  values: number[];
}

// Drawn at about the size it is shown (a card of 300–400 px), so 12 units are about 12 px on screen.
const W = 360;
const H = 200;
const PAD = { left: 40, right: 20, top: 10, bottom: 26 };
const FONT = 12;

/**
 * Evenly stepped integer ticks from 0: a step of 1, 2 or 5 × a power of ten, at most five steps
 * (0, 1, 2, 3, 4 for small counts; 0, 20, 40, 60 for 57).
 */
export function yTicks(max: number): number[] {
  const top = Math.max(4, max);
  let step = 1;
  for (let p = 1; step * 5 < top; p *= 10) step = [1, 2, 5, 10].map((m) => m * p).find((s) => s * 5 >= top) ?? 10 * p;
  return Array.from({ length: Math.ceil(top / step) + 1 }, (_, i) => i * step);
}

/** Which days get a label: the last one always, then every `step` days back, at most about six. */
export function labelledDays(count: number): Set<number> {
  const step = Math.max(1, Math.ceil(count / 6));
  const out = new Set<number>();
  for (let i = count - 1; i >= 0; i -= step) out.add(i);
  return out;
}

/**
 * A line chart drawn as inline SVG, one line per series over the days, with a legend and, for
 * screen readers and for exact figures, the same numbers as a table inside a disclosure. Series
 * drawn later are narrower and dashed, so a series with the same values as an earlier one shows
 * inside it instead of hiding it.
 */
export function lineChart(title: string, days: string[], series: Series[]): HTMLElement {
  const ticks = yTicks(Math.max(0, ...series.flatMap((s) => s.values)));
  const max = ticks.at(-1)!;
  const x = (i: number) => PAD.left + (days.length <= 1 ? 0 : (i * (W - PAD.left - PAD.right)) / (days.length - 1));
  const y = (v: number) => H - PAD.bottom - (v / max) * (H - PAD.top - PAD.bottom);
  const text = { 'font-size': FONT, fill: '#57606a' };
  const grid = ticks.map((v) =>
    svg(
      'g',
      { class: 'y-tick' },
      svg('line', { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), stroke: '#d0d7de', 'stroke-width': 1 }),
      svg('text', { ...text, x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end' }, String(v)),
    ),
  );
  const shown = labelledDays(days.length);
  const labels = days.map((d, i) => (shown.has(i) ? svg('text', { ...text, class: 'x-tick', x: x(i), y: H - 7, 'text-anchor': 'middle' }, d.slice(5)) : null));
  const widths = series.map((_, k) => Math.max(1.5, 5 - 1.5 * k));
  const lines = series.map((s, k) =>
    svg('polyline', {
      class: 'series',
      'data-series': s.name,
      fill: 'none',
      stroke: s.color,
      'stroke-width': widths[k],
      'stroke-dasharray': k === 0 ? null : `${6 + 2 * k} ${3 + k}`,
      'stroke-linejoin': 'round',
      points: s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' '),
    }),
  );
  const totals = series.map((s) => `${s.name} ${s.values.reduce((a, b) => a + b, 0)}`).join(', ');
  return h(
    'figure',
    { class: 'card' },
    h('figcaption', {}, h('strong', {}, title)),
    svg('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `${title}, ${days[0]} to ${days.at(-1)}: ${totals}` }, grid, labels, lines),
    h(
      'ul',
      { class: 'legend' },
      series.map((s, k) =>
        h(
          'li',
          {},
          svg(
            'svg',
            { class: 'swatch', viewBox: '0 0 24 10', 'aria-hidden': 'true' },
            svg('line', {
              x1: 0,
              x2: 24,
              y1: 5,
              y2: 5,
              stroke: s.color,
              'stroke-width': Math.min(widths[k], 4),
              'stroke-dasharray': k === 0 ? null : `${6 + 2 * k} ${3 + k}`,
            }),
          ),
          `${s.name}: ${s.values.reduce((a, b) => a + b, 0)}`,
        ),
      ),
    ),
    h(
      'details',
      {},
      h('summary', {}, 'Figures per day'),
      scroller(
        `${title}, figures per day`,
        h(
          'table',
          {},
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', { scope: 'col' }, 'Day'),
              series.map((s) => h('th', { scope: 'col' }, s.name)),
            ),
          ),
          h(
            'tbody',
            {},
            days.map((d, i) =>
              h(
                'tr',
                {},
                h('td', {}, d),
                series.map((s) => h('td', {}, String(s.values[i]))),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}
