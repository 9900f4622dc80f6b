/**
 * The per-recipient cost of tracking on a large body: a 1 MB HTML part with 500 links, through
 * the render step the delivery role runs (open and click tracking on: parse, sign 500 click
 * tokens and an open token, rewrite) and then through `recipientCopy` (the recipient's HTML
 * part encoded, the body hashed, the copy DKIM-signed), for each of N recipients.
 *
 *   npx tsx bench/tracking.ts [recipients=20]
 */
import { createRenderStep } from '../src/delivery/render.ts';
import { prepareMessage, recipientCopy } from '../src/delivery/compose.ts';
import { generateDkimKey } from '../src/dkim/keys.ts';
import type { FieldsContent, MessageEnvelope } from '../src/messages/content.ts';
import type { MessageWithContent } from '../src/store/messages.ts';
import { createTokenCodec } from '../src/tokens/index.ts';

const recipients = Number(process.argv[2] ?? 20);
const LINKS = 500;
const filler = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(Math.ceil(1_000_000 / LINKS / 57));
const html = `<html><body>${Array.from({ length: LINKS }, (_, i) => `<p>${filler}<a href="https://shop.example/p/${i}?a=1&amp;b=${i}#r">item ${i}</a></p>`).join('\n')}</body></html>`;

const keyring = { current: 'k1', keys: { k1: 'bench-signing-key-0123456789' } };
const tokens = {
  open: createTokenCodec(keyring, { purpose: 'open' }),
  click: createTokenCodec(keyring, { purpose: 'click' }),
  unsubscribe: createTokenCodec(keyring, { purpose: 'unsubscribe' }),
};
const render = createRenderStep({ tokens, baseUrl: 'https://mail.bench.test' });
const key = await generateDkimKey();
const row = {
  id: 1,
  workspace_id: 1,
  domain: 'bench.test',
  stream: 'transactional',
  message_id_header: '<1@bench.test>',
  from_header: 'News <news@bench.test>',
  subject: 'Hello',
  envelope: JSON.stringify({ to: ['someone@example.org'], cc: [], bcc: [], reply_to: [], tags: [] } satisfies MessageEnvelope),
  content: JSON.stringify({ kind: 'fields', html, text: 'Hello', headers: {}, attachments: [] } satisfies FieldsContent),
  created_at: Date.now(),
  scheduled_at: null,
} as unknown as MessageWithContent;
const prepared = await prepareMessage(row, 'mail.bench.test');

const renderMs: number[] = [];
const copyMs: number[] = [];
for (let r = 0; r < recipients; r++) {
  const start = performance.now();
  const own = await render(prepared, {
    tracking: { open: true, click: true },
    recipient: { id: 1000 + r, address: `r${r}@example.org` },
    stream: 'transactional',
    returnPathDomain: 'bounces.bench.test',
  });
  const rendered = performance.now();
  recipientCopy(prepared, own, [{ domain: 'bench.test', selector: 's1', algorithm: 'rsa-sha256', privateKeyPem: key.privateKeyPem }], Date.now());
  renderMs.push(rendered - start);
  copyMs.push(performance.now() - rendered);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  JSON.stringify({
    html_bytes: html.length,
    links: LINKS,
    recipients,
    rewrite_ms_median: Number(median(renderMs).toFixed(1)),
    rewrite_ms_max: Number(Math.max(...renderMs).toFixed(1)),
    encode_and_sign_ms_median: Number(median(copyMs).toFixed(1)),
  }),
);
