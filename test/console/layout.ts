import type { Page } from 'playwright-core';

/**
 * The layout rules, checked in the page: no chart label outside its chart or smaller than 10 px
 * on screen, y ticks evenly stepped integers from 0, every series reachable on screen (not
 * entirely under another), no cell whose content overflows it, and no word broken inside a
 * cell (a column narrower than its longest word); a DKIM key or a raw header value, which
 * nobody reads word by word, may break.
 */
export async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    for (const chart of document.querySelectorAll<SVGSVGElement>('svg.chart')) {
      const name = chart.getAttribute('aria-label')?.split(',')[0];
      const box = chart.getBoundingClientRect();
      const scale = box.width / chart.viewBox.baseVal.width;
      for (const t of chart.querySelectorAll<SVGTextElement>('text')) {
        const r = t.getBoundingClientRect();
        if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
          problems.push(`${name}: label "${t.textContent}" outside the chart`);
        const px = Number(t.getAttribute('font-size')) * scale;
        if (px < 10) problems.push(`${name}: label "${t.textContent}" is ${px.toFixed(1)} px`);
      }
      const ticks = [...chart.querySelectorAll('.y-tick text')].map((t) => Number(t.textContent));
      const steps = ticks.slice(1).map((v, i) => v - ticks[i]!);
      if (ticks[0] !== 0 || !ticks.every(Number.isInteger) || new Set(steps).size !== 1) problems.push(`${name}: y ticks ${ticks.join(', ')}`);
      chart.scrollIntoView({ block: 'center' }); // hit testing sees only what is in the viewport
      for (const line of chart.querySelectorAll<SVGPolylineElement>('polyline.series')) {
        const ctm = line.getScreenCTM()!;
        let seen = false;
        for (const p of [...line.points]) {
          for (const dx of [-6, -3, 0, 3, 6]) {
            for (const dy of [-3, -2, -1, 0, 1, 2, 3]) {
              const x = p.x * ctm.a + ctm.e + dx;
              const y = p.y * ctm.d + ctm.f + dy;
              if (document.elementFromPoint(x, y) === line) seen = true;
            }
          }
        }
        if (!seen) problems.push(`${name}: series ${line.dataset.series} is hidden`);
      }
    }
    for (const cell of document.querySelectorAll<HTMLElement>('main td, main th')) {
      if (cell.closest('details:not([open])')) continue;
      if (cell.scrollWidth > cell.clientWidth + 1) problems.push(`cell "${cell.textContent?.slice(0, 40)}" overflows`);
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const parent = node.parentElement;
        if (!parent || !parent.checkVisibility() || parent.closest('.record-value, .header-value, button')) continue;
        const text = node.textContent ?? '';
        for (const m of text.matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(node, m.index);
          range.setEnd(node, m.index + m[0].length);
          const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
          if (lines.size > 1) problems.push(`"${m[0]}" is broken over ${lines.size} lines`);
        }
      }
    }
    return problems;
  });
}
