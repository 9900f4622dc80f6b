/** A 1×1 transparent GIF89a: 43 bytes. */
export const TRANSPARENT_GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

/**
 * The Location of a redirect to a tracked URL: the URL byte for byte, except that characters a
 * header may not carry (controls, spaces, non-ASCII) are percent-encoded as a browser would.
 */
export function locationHeader(url: string): string {
  let out = '';
  for (const ch of url) {
    const code = ch.codePointAt(0)!;
    out += code > 0x20 && code < 0x7f ? ch : encodeURIComponent(ch);
  }
  return out;
}

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${title}</title></head>
<body style="font-family:sans-serif;max-width:32em;margin:4em auto;padding:0 1em">${body}</body></html>
`;

/**
 * GET shows a button and changes nothing: link scanners and prefetchers follow GETs, so only
 * the POST (the button, or a mail client's one-click request) unsubscribes.
 */
export const unsubscribePage = () =>
  page(
    'Unsubscribe',
    `<h1>Unsubscribe</h1><p>Stop receiving these emails at this address?</p>
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
  );

export const unsubscribedPage = () => page('Unsubscribed', '<h1>Unsubscribed</h1><p>You will not receive these emails at this address any more.</p>');
