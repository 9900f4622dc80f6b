import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DnsResolver } from '../../src/core/ports.ts';
import { dkimTxtRecord, generateDkimKey, type DkimKeyPair } from '../../src/dkim/keys.ts';
import { createRequire } from 'node:module';
import { MAX_LINE_OCTETS, dkimBodyHash, normaliseMessage, signMessage } from '../../src/dkim/sign.ts';
import { createDnsResolver } from '../../src/dns/resolver.ts';
import { startTestDns, type TestDns } from '../helpers/dns-server.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';
import { DKIMPY_MISSING, dkimpyPython, dkimpyVerdict } from '../delivery/dkim-check.ts';

const DOMAIN = 'example.test';
const SELECTOR = 'mk1';

let dns: TestDns;
let resolver: DnsResolver;
let key: DkimKeyPair;

beforeAll(async () => {
  [dns, key] = await Promise.all([startTestDns(), generateDkimKey()]);
  dns.set(`${SELECTOR}._domainkey.${DOMAIN}`, 'TXT', dkimTxtRecord(key.publicKeyBase64));
  resolver = createDnsResolver([dns.address], 2000);
});
afterAll(async () => {
  await dns.close();
});

/** mailauth's resolver hook, answered by our real resolver against the test DNS server. */
function mailauthResolver(name: string, rrtype: string): Promise<string[][] | string[]> {
  if (rrtype === 'TXT') return resolver.resolveTxt(name);
  if (rrtype === 'A') return resolver.resolve4(name);
  if (rrtype === 'AAAA') return resolver.resolve6(name);
  return Promise.reject(Object.assign(new Error(`unsupported ${rrtype}`), { code: 'ENOTFOUND' }));
}

async function mailauthResult(message: Buffer): Promise<string> {
  const result = await dkimVerify(message, { resolver: mailauthResolver });
  return result.results.map((entry) => entry.status.result).join(',');
}

const plain = Buffer.from(
  [
    'From: "Sender" <sender@example.test>',
    'To: rcpt@dest.test',
    'Cc: other@dest.test',
    'Subject: Hello there',
    'Date: Sat, 21 Nov 2026 10:00:00 +0000',
    'Message-ID: <abc.123@example.test>',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
    'Feedback-ID: msg:ws1:transactional:mailsvc',
    'List-Unsubscribe: <https://t.example.test/t/u/abc>, <mailto:u+abc@bounces.example.test>',
    'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
    'X-Unsigned: not in h=',
    '',
    'Grüße,  with   spaces   ',
    '',
    '',
  ].join('\r\n'),
);

const awkward = Buffer.concat([
  Buffer.from('From: sender@example.test\nTo: rcpt@dest.test\nSubject: long lines\n'),
  Buffer.from('MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n'),
  Buffer.from(`${'x'.repeat(2000)}\n`),
  Buffer.from(`${'word '.repeat(400)}\n`),
  Buffer.from(`${'é'.repeat(1200)}\nbare CR\rend`),
]);

function lines(message: Buffer): string[] {
  return message.toString('latin1').split('\r\n');
}

describe('normaliseMessage', () => {
  it('leaves CRLF only, no line over 998 octets, a final CRLF, and UTF-8 sequences whole', () => {
    const out = normaliseMessage(awkward);
    const text = out.toString('latin1');
    expect(text).not.toMatch(/\r(?!\n)|(?<!\r)\n/);
    expect(text.endsWith('\r\n')).toBe(true);
    for (const line of lines(out)) expect(line.length).toBeLessThanOrEqual(MAX_LINE_OCTETS);
    const body = out.toString('utf8').split('\r\n\r\n')[1]!;
    expect(body).not.toContain('\uFFFD');
    expect(body.replace(/\r\n/g, '')).toBe(`${'x'.repeat(2000)}${'word '.repeat(400)}${'é'.repeat(1200)}bare CRend`);
  });

  it('folds an over-long header at whitespace, which unfolding undoes', () => {
    const long = `Subject: ${'abc '.repeat(400)}`;
    const out = normaliseMessage(Buffer.from(`${long}\r\n\r\nbody\r\n`));
    const head = out.toString('latin1').split('\r\n\r\n')[0]!;
    for (const line of head.split('\r\n')) expect(line.length).toBeLessThanOrEqual(MAX_LINE_OCTETS);
    expect(head.replace(/\r\n(?=[ \t])/g, '')).toBe(long);
  });

  it('leaves a well-formed message byte for byte', () => {
    expect(normaliseMessage(plain).equals(plain)).toBe(true);
  });
});

describe('signMessage', () => {
  it('prepends a relaxed/relaxed rsa-sha256 signature over the present fields, From oversigned', async () => {
    const signed = await signMessage(plain, { domain: DOMAIN, selector: SELECTOR, privateKeyPem: key.privateKeyPem });
    const field = signed
      .toString('latin1')
      .split(/\r\n(?![ \t])/)[0]!
      .replace(/\r\n[ \t]+/g, ' ');
    expect(field).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=example\.test;/);
    expect(field).toContain('s=mk1;');
    const h = /h=([^;]+);/
      .exec(field)![1]!
      .split(':')
      .map((name) => name.trim().toLowerCase());
    expect(h.filter((name) => name === 'from')).toHaveLength(2);
    expect(new Set(h)).toEqual(
      new Set([
        'from',
        'to',
        'cc',
        'subject',
        'date',
        'message-id',
        'mime-version',
        'content-type',
        'content-transfer-encoding',
        'feedback-id',
        'list-unsubscribe',
        'list-unsubscribe-post',
      ]),
    );
    expect(signed.subarray(signed.length - plain.length).equals(plain)).toBe(true);
  });

  it('lists the signed fields from the bottom of the header up, and folds the field within 78 octets a line', async () => {
    const twoTo = Buffer.from(['From: a@example.test', 'To: first@dest.test', 'Subject: s', 'To: second@dest.test', '', 'body', ''].join('\r\n'));
    const signed = await signMessage(twoTo, { domain: DOMAIN, selector: SELECTOR, privateKeyPem: key.privateKeyPem, headerFields: ['From', 'To', 'Subject'] });
    const fieldLines = signed.toString('latin1').split('\r\n');
    const end = fieldLines.findIndex((line, i) => i > 0 && !/^[ \t]/.test(line));
    const folded = fieldLines.slice(0, end);
    expect(folded.length).toBeGreaterThan(3);
    for (const line of folded) expect(line.length).toBeLessThanOrEqual(78);
    const field = folded.join(' ');
    expect(
      /h=([^;]+);/
        .exec(field)![1]!
        .split(':')
        .map((name) => name.trim()),
    ).toEqual(['To', 'Subject', 'To', 'From', 'From']);
    expect(/b=([^;]+)$/.exec(field)![1]!.replace(/\s/g, '')).toMatch(/^[A-Za-z0-9+/]{342}==$/);
    expect(await mailauthResult(signed)).toBe('pass');
  });

  it('verifies with mailauth, the key fetched from the test DNS server', async () => {
    const signed = await signMessage(plain, { domain: DOMAIN, selector: SELECTOR, privateKeyPem: key.privateKeyPem });
    expect(await mailauthResult(signed)).toBe('pass');
    expect(dns.queries).toContainEqual({ name: `${SELECTOR}._domainkey.${DOMAIN}`, type: 'TXT' });
  });

  it('verifies after normalising bare LF, bare CR and 2000-octet lines', async () => {
    const signed = await signMessage(awkward, { domain: DOMAIN, selector: SELECTOR, privateKeyPem: key.privateKeyPem });
    expect(await mailauthResult(signed)).toBe('pass');
    for (const line of lines(signed)) expect(line.length).toBeLessThanOrEqual(MAX_LINE_OCTETS);
  });

  it('fails verification when a signed field changes or a second From is added', async () => {
    const signed = (await signMessage(plain, { domain: DOMAIN, selector: SELECTOR, privateKeyPem: key.privateKeyPem })).toString('latin1');
    expect(await mailauthResult(Buffer.from(signed.replace('Hello there', 'Hello where'), 'latin1'))).toBe('fail');
    expect(await mailauthResult(Buffer.from(`From: evil@attacker.test\r\n${signed}`, 'latin1'))).toBe('fail');
    expect(await mailauthResult(Buffer.from(signed.replace('X-Unsigned: not', 'X-Unsigned: yes'), 'latin1'))).toBe('pass');
  });

  it('still verifies after SMTP transit through a real server', async () => {
    const sink = await startSmtpSink();
    try {
      const signed = await signMessage(awkward, { domain: DOMAIN, selector: SELECTOR, privateKeyPem: key.privateKeyPem });
      const client = new SMTPConnection({ host: sink.host, port: sink.port, name: 'client.test' });
      await new Promise<void>((resolve, reject) => {
        client.on('error', reject);
        client.connect(() => client.send({ from: 'b@bounces.example.test', to: 'rcpt@dest.test' }, signed, (err) => (err ? reject(err) : resolve())));
      });
      client.close();
      const [received] = await sink.waitForMessages(1);
      expect(await mailauthResult(received!.raw)).toBe('pass');
    } finally {
      await sink.close();
    }
  });

  it('uses the given time for t=', async () => {
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const signed = await signMessage(plain, {
      domain: DOMAIN,
      selector: SELECTOR,
      privateKeyPem: key.privateKeyPem,
      now,
    });
    expect(signed.toString('latin1')).toContain(`t=${now / 1000};`);
  });

  it('dkimpy verifies a plain message and the normalised awkward one', async (ctx) => {
    ctx.skip(!dkimpyPython, DKIMPY_MISSING);
    const verdict = (message: Buffer) => dkimpyVerdict(message, `${SELECTOR}._domainkey.${DOMAIN}`, dkimTxtRecord(key.publicKeyBase64));
    for (const message of [plain, awkward]) {
      const signed = await signMessage(message, { domain: DOMAIN, selector: SELECTOR, privateKeyPem: key.privateKeyPem });
      expect(verdict(signed)).toBe('pass');
    }
    const signed = await signMessage(plain, { domain: DOMAIN, selector: SELECTOR, privateKeyPem: key.privateKeyPem });
    expect(verdict(Buffer.from(`From: evil@attacker.test\r\n${signed.toString('latin1')}`, 'latin1'))).toBe('fail');
  });
});

/** mailauth's relaxed body canonicaliser, the reference our hash is held to. */
const { dkimBody } = createRequire(import.meta.url)('mailauth/lib/dkim/body') as {
  dkimBody(c: 'relaxed', a: 'sha256', l: false): { update(chunk: Buffer): void; digest(encoding: 'base64'): string };
};

function referenceBodyHash(body: Buffer): string {
  const hasher = dkimBody('relaxed', 'sha256', false);
  hasher.update(body);
  return hasher.digest('base64');
}

describe('the relaxed body hash', () => {
  it('equals the reference canonicaliser on bodies with and without whitespace to fold', () => {
    const pieces = ['word', ' ', '  ', '\t', '\r\n', '\r\n\r\n', 'é', '.', '=3D'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const bodies = ['', '\r\n', '\r\n\r\n', 'x', 'x\r\n', 'x\r\n\r\n\r\n', 'x ', 'a  b\r\n', 'a \r\nb\r\n', '\tx\r\n'];
    for (let i = 0; i < 400; i++) bodies.push(Array.from({ length: next() % 40 }, () => pieces[next() % pieces.length]).join(''));
    for (const text of bodies) {
      const body = Buffer.from(text, 'utf8');
      expect(dkimBodyHash([body]), JSON.stringify(text)).toBe(referenceBodyHash(body));
      const cut = next() % (body.length + 1);
      expect(dkimBodyHash([body.subarray(0, cut), body.subarray(cut)]), JSON.stringify(text)).toBe(referenceBodyHash(body));
    }
  });
});

describe('relaxed header canonicalisation', () => {
  // Tabs, runs of spaces, folds, and raw UTF-8 whose octets include
  // 0xA0 (the second octet of "à"), which is not whitespace to DKIM (RFC 6376 §3.4.2 folds WSP only).
  const untidy = Buffer.from(
    [
      'From:\t"Sender   Name"  <sender@example.test>  ',
      'To:  rcpt@dest.test,',
      ' \t other@dest.test',
      'Subject: voilà  à\tbientôt ',
      'Date: Sat, 21 Nov 2026 10:00:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Body',
      '',
    ].join('\r\n'),
    'utf8',
  );

  it('is verified by dkimpy, and a change inside a folded field is not', async (ctx) => {
    ctx.skip(!dkimpyPython, DKIMPY_MISSING);
    const verdict = (message: Buffer) => dkimpyVerdict(message, `${SELECTOR}._domainkey.${DOMAIN}`, dkimTxtRecord(key.publicKeyBase64));
    const signed = await signMessage(untidy, { domain: DOMAIN, selector: SELECTOR, privateKeyPem: key.privateKeyPem });
    expect(verdict(signed)).toBe('pass');
    expect(verdict(Buffer.from(signed.toString('latin1').replace('other@dest', 'other@evil'), 'latin1'))).toBe('fail');
  });

  it('is verified by mailauth for the same fields in ASCII', async () => {
    const ascii = Buffer.from(untidy.toString('utf8').replace(/à/g, 'a').replace('ô', 'o'), 'utf8');
    expect(await mailauthResult(await signMessage(ascii, { domain: DOMAIN, selector: SELECTOR, privateKeyPem: key.privateKeyPem }))).toBe('pass');
  });
});
