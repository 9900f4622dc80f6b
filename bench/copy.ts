/**
 * Building and signing one recipient's copy, as the signing thread does for every message
 * (`CopyBuilder.build`: the message's MIME from its stored fields, then the DKIM-Signature), in
 * this process, against the RSA-2048 signature alone with the same key. The difference is the
 * JavaScript of a copy, which is what varies between machines less than RSA does.
 *
 *   npm run bench -- copy [copies=5000] [runs=5] [bytes=5120] [parts=text|alternative]
 *
 * The message is the one `http-to-sink` sends: a text part of `bytes` in 87-character lines
 * (quoted-printable), one recipient; with `alternative`, also an HTML part of the same text, a
 * paragraph per line. CPU time of this process per copy; min and median of the runs.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { systemClock } from '../src/core/ports.ts';
import { CopyBuilder, type CopyJob } from '../src/delivery/copy-builder.ts';
import type { MessageWithContent } from '../src/store/messages.ts';
import { machineLine } from './lib/machine.ts';

const [copies = 5000, runs = 5, bytes = 5120] = process.argv.slice(2, 5).map(Number);
const parts = process.argv[5] ?? 'text';
if (parts !== 'text' && parts !== 'alternative') throw new Error(`parts must be text or alternative, not ${parts}`);

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const line = 'Your order has shipped and is on its way. Track it from your account page at any time.\n';
const text = line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);
const html = parts === 'alternative' ? `<html><body><p>${text.replaceAll('\n', '</p><p>')}</p></body></html>` : null;
const content = JSON.stringify({ kind: 'fields', html, text, headers: {}, attachments: [] });
const envelope = JSON.stringify({ to: ['user@dest.test'], cc: [], bcc: [], reply_to: [], tags: [] });
const builder = new CopyBuilder(systemClock, 64 << 20);
let id = 0;

function job(): CopyJob {
  id++;
  const row: MessageWithContent = {
    id,
    workspace_id: 1,
    api_key_id: 1,
    domain: 'bench.test',
    stream: 'transactional',
    status: 'queued',
    source: 'api',
    from_header: 'News <news@bench.test>',
    from_address: 'news@bench.test',
    subject: 'Your order has shipped',
    envelope,
    message_id_header: `<${id}.bench@bench.test>`,
    created_at: Date.now(),
    scheduled_at: null,
    content,
    raw: null,
  };
  return { row, senderId: 'mx.bench.test', own: {}, keys: [{ domain: 'bench.test', selector: 's1', algorithm: 'rsa-sha256', privateKeyPem }], now: Date.now() };
}

/** CPU milliseconds per call of `work`, over `n` calls. */
async function cpuPer(n: number, work: () => unknown): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) await work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / n;
}

const header = Buffer.alloc(400, 'a');
const spread = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return { min: sorted[0]!, median: sorted[Math.floor(sorted.length / 2)]! };
};

console.log(machineLine());
// Warm up both, so the runs measure compiled code.
await cpuPer(Math.min(copies, 1000), () => builder.build(job()));
await cpuPer(200, () => sign('rsa-sha256', header, privateKey));
const copy: number[] = [];
const rsa: number[] = [];
for (let r = 0; r < runs; r++) {
  copy.push(await cpuPer(copies, () => builder.build(job())));
  rsa.push(await cpuPer(Math.max(200, copies / 5), () => sign('rsa-sha256', header, privateKey)));
  console.log(`run ${r + 1}: copy ${copy.at(-1)!.toFixed(3)} ms, RSA-2048 alone ${rsa.at(-1)!.toFixed(3)} ms`);
}
const c = spread(copy);
const s = spread(rsa);
console.log(
  `copy: ${copies} copies of ${bytes} B (${parts === 'text' ? 'a text part' : 'a text and an HTML part'}), ${runs} runs; ${c.median.toFixed(3)} ms CPU per copy (min ${c.min.toFixed(3)}), RSA-2048 alone ${s.median.toFixed(3)} ms (min ${s.min.toFixed(3)}): the rest ${(c.median - s.median).toFixed(3)} ms, ${(c.median / s.median).toFixed(2)}x RSA`,
);
