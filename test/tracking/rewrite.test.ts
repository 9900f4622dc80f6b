import { describe, expect, it } from 'vitest';
import { rewriteHtml } from '../../src/tracking/rewrite.ts';

const track = (url: string) => `https://t.test/c?u=${encodeURIComponent(url)}`;

describe('rewriteHtml', () => {
  it('decodes entities in an href exactly once and escapes the tracked URL for its attribute', () => {
    const seen: string[] = [];
    const out = rewriteHtml('<a href="https://a.test/?x=1&amp;y=&amp;amp;&#x7A;">a</a>', { link: (u) => (seen.push(u), `https://t.test/c?a=1&b="2"`) });
    expect(seen).toStrictEqual(['https://a.test/?x=1&y=&amp;z']);
    expect(out).toBe('<a href="https://t.test/c?a=1&amp;b=&quot;2&quot;">a</a>');
  });

  it('leaves every byte outside the rewritten tags as written: comments, scripts, styles, odd markup', () => {
    const html = `<!-- <a href="https://c.test/">no</a> --><script>var s = '<a href="https://s.test/">';</script><style>a[href^="http"]{}</style><p class=x>Hi &nbsp;<b>there</p>`;
    expect(rewriteHtml(html, { link: track })).toBe(html);
  });

  it('places the pixel before the first real </body>, or at the end when there is none', () => {
    expect(rewriteHtml('<html><body><p>x</p></body></html>', { pixel: 'https://t.test/o' })).toMatch(
      /^<html><body><p>x<\/p><img src="https:\/\/t\.test\/o"[^>]*\/><\/body><\/html>$/,
    );
    expect(rewriteHtml('<p>x</p>', { pixel: 'https://t.test/o' })).toMatch(/^<p>x<\/p><img src="https:\/\/t\.test\/o"[^>]*\/>$/);
    expect(rewriteHtml('<p>x</p><!-- </body> -->', { pixel: 'P' })).toMatch(/^<p>x<\/p><!-- <\/body> --><img src="P"/);
  });

  it('tracks only http(s) links; removes data-mailsvc-notrack and keeps that link; a null from the callback keeps a link', () => {
    const html = '<a href="mailto:a@b.test">m</a><a href="tel:1">t</a><a href="#x">h</a><a href="javascript:alert(1)">j</a><a href="ftp://f.test/">f</a><a>none</a>';
    expect(rewriteHtml(html, { link: track })).toBe(html);
    expect(rewriteHtml('<a data-mailsvc-notrack="" href="https://k.test/" class="c">k</a>', { link: track })).toBe('<a href="https://k.test/" class="c">k</a>');
    expect(rewriteHtml('<a href="https://k.test/">k</a>', { link: () => null })).toBe('<a href="https://k.test/">k</a>');
    expect(rewriteHtml('<A HREF=" HTTPS://u.test/x ">u</A>', { link: (u) => `T:${u}` })).toBe('<a href="T:HTTPS://u.test/x">u</A>');
  });

  it('is linear: 8 MB with 4,000 links takes about as long per byte as 1 MB with 500', () => {
    const body = (n: number) =>
      `<html><body>${Array.from({ length: n }, (_, i) => `<p>${'lorem ipsum '.repeat(170)}<a href="https://shop.test/p/${i}?a=1&amp;b=2">l${i}</a></p>`).join('')}</body></html>`;
    // Best of three per size: on a busy machine a single run can be descheduled.
    const time = (html: string) => {
      let best = Infinity;
      for (let i = 0; i < 3; i++) {
        const start = performance.now();
        rewriteHtml(html, { link: track, pixel: 'P' });
        best = Math.min(best, performance.now() - start);
      }
      return best / html.length;
    };
    const small = body(500);
    const large = body(4000);
    expect(small.length).toBeGreaterThan(1_000_000);
    // Quadratic work would make the large body 8 times slower per byte.
    expect(time(large) / time(small)).toBeLessThan(4);
  }, 60_000);
});
