import { h, scroller, svg } from './dom.ts';

export interface Series {
  name: string;
  color: string;
  values: number[];
}

const W = 640;
const H = 220;
const PAD = { left: 40, right: 10, top: 10, bottom: 28 };

/** A rounded-up axis maximum: 1, 2, 5 × a power of ten. */
function niceMax(n: number): number {
  if (n <= 4) return 4;
  const p = 10 ** Math.floor(Math.log10(n));
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= n)!;
}

/**
 * A line chart drawn as inline SVG, one line per series over the days, with a legend and, for
 * screen readers and for exact figures, the same numbers as a table inside a disclosure.
 */
export function lineChart(title: string, days: string[], series: Series[]): HTMLElement {
  const max = niceMax(Math.max(0, ...series.flatMap((s) => s.values)));
  const x = (i: number) => PAD.left + (days.length <= 1 ? 0 : (i * (W - PAD.left - PAD.right)) / (days.length - 1));
  const y = (v: number) => H - PAD.bottom - (v / max) * (H - PAD.top - PAD.bottom);
  const grid = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const v = Math.round(max * f);
    return svg('g', {}, svg('line', { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), stroke: '#d0d7de', 'stroke-width': 1 }), svg('text', { x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#57606a' }, String(v)));
  });
  const step = Math.max(1, Math.ceil(days.length / 6));
  const labels = days.map((d, i) => (i % step === 0 || i === days.length - 1 ? svg('text', { x: x(i), y: H - 8, 'text-anchor': 'middle', 'font-size': 11, fill: '#57606a' }, d.slice(5)) : null));
  const lines = series.map((s) =>
    svg('polyline', { fill: 'none', stroke: s.color, 'stroke-width': 2, points: s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ') }),
  );
  const totals = series.map((s) => `${s.name} ${s.values.reduce((a, b) => a + b, 0)}`).join(', ');
  return h(
    'figure',
    { class: 'card' },
    h('figcaption', {}, h('strong', {}, title)),
    svg('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `${title}, ${days[0]} to ${days.at(-1)}: ${totals}` }, grid, labels, lines),
    h('ul', { class: 'legend' }, series.map((s) => h('li', {}, h('span', { style: `background:${s.color}` }), `${s.name}: ${s.values.reduce((a, b) => a + b, 0)}`))),
    h(
      'details',
      {},
      h('summary', {}, 'Figures per day'),
      scroller(`${title}, figures per day`, h('table', {}, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Day'), series.map((s) => h('th', { scope: 'col' }, s.name)))), h('tbody', {}, days.map((d, i) => h('tr', {}, h('td', {}, d), series.map((s) => h('td', {}, String(s.values[i])))))))),
    ),
  );
}
