import { describe, expect, it } from 'vitest';
import { FairScheduler } from '../../src/delivery/fair-scheduler.ts';
import { rewriteHtml, rewriteHtmlSliced } from '../../src/tracking/rewrite.ts';

/** A task the test finishes by hand, recording when it started. */
function gate(log: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { run: () => (log.push(name), done), finish };
}

describe('FairScheduler', () => {
  it('takes heavy work round-robin by workspace within the byte budget; light work never waits', async () => {
    const scheduler = new FairScheduler({ lightBytes: 100, budgetBytes: 1000 });
    const log: string[] = [];
    const a = Array.from({ length: 4 }, (_, i) => gate(log, `a${i}`));
    const b = Array.from({ length: 2 }, (_, i) => gate(log, `b${i}`));
    const runs = [...a.map((g) => scheduler.run(1, 800, g.run)), ...b.map((g) => scheduler.run(2, 800, g.run))];
    // One heavy task fits the budget; the rest wait.
    expect(log).toEqual(['a0']);
    expect(scheduler.waiting).toBe(5);
    // Light work of any workspace starts at once.
    const light = gate(log, 'light');
    const lightRun = scheduler.run(1, 10, light.run);
    expect(log).toEqual(['a0', 'light']);

    for (const g of [a[0], b[0], a[1], b[1], a[2], a[3]]) {
      g!.finish();
      await new Promise((resolve) => setImmediate(resolve));
    }
    light.finish();
    await Promise.all([...runs, lightRun]);
    // B's first task came second although all of A's were asked for first.
    expect(log).toEqual(['a0', 'light', 'b0', 'a1', 'b1', 'a2', 'a3']);
    expect(scheduler.waiting).toBe(0);
  });

  it('a task over the budget on its own still runs, alone', async () => {
    const scheduler = new FairScheduler({ lightBytes: 100, budgetBytes: 1000 });
    const log: string[] = [];
    const big = gate(log, 'big');
    const small = gate(log, 'small');
    const runs = [scheduler.run(1, 5000, big.run), scheduler.run(2, 500, small.run)];
    expect(log).toEqual(['big']);
    big.finish();
    await runs[0];
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['big', 'small']);
    small.finish();
    await runs[1];
  });
});

describe('rewriteHtmlSliced', () => {
  it('gives the same HTML as rewriteHtml, whatever the slice size', async () => {
    const html =
      `<html><body><p>é 😀 <a href="https://x.example/?a=1&amp;b=2">one</a> <A HREF=' https://y.example/ ' class=c>two</A>` +
      `<a data-mailsvc-notrack href="https://keep.example/">kept</a><a href="mailto:x@y">m</a>` +
      Array.from({ length: 200 }, (_, i) => `<a href="https://z.example/${i}">${i}</a>`).join('') +
      `</p></body></html>`;
    let n = 0;
    const options = { link: (url: string) => `https://t.example/c/${n++}/${url.length}`, pixel: 'https://t.example/o/1' };
    n = 0;
    const whole = rewriteHtml(html, options);
    for (const slice of [1, 7, 64, 1000]) {
      n = 0;
      expect(await rewriteHtmlSliced(html, options, slice, () => Promise.resolve())).toBe(whole);
    }
    expect(whole).toContain('https://t.example/c/201/');
  });
});
