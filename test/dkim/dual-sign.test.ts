import { describe, expect, it, onTestFinished } from 'vitest';
import { dkimTxtRecord, generateDkimKey } from '../../src/dkim/keys.ts';
import { signMessage } from '../../src/dkim/sign.ts';
import { startTestDns } from '../helpers/dns-server.ts';
import { DKIMPY_MISSING, dkimpyPython, dkimpyVerdicts, mailauthVerdict } from '../delivery/dkim-check.ts';

const DOMAIN = 'dual.test';
const MESSAGE = Buffer.from(
  [
    'From: Dual <news@dual.test>',
    'To: someone@example.org',
    'Subject: Two signatures',
    'Date: Sat, 21 Nov 2026 10:00:00 +0000',
    'Message-ID: <m1@dual.test>',
    '',
    'Signed twice.',
    '',
  ].join('\r\n'),
);

async function dualSigned() {
  const [rsa, ed] = await Promise.all([generateDkimKey('rsa-sha256'), generateDkimKey('ed25519-sha256')]);
  const records = {
    [`rsa1._domainkey.${DOMAIN}`]: dkimTxtRecord(rsa.publicKeyBase64, 'rsa-sha256'),
    [`ed1._domainkey.${DOMAIN}`]: dkimTxtRecord(ed.publicKeyBase64, 'ed25519-sha256'),
  };
  const signed = await signMessage(MESSAGE, [
    { domain: DOMAIN, selector: 'rsa1', algorithm: 'rsa-sha256', privateKeyPem: rsa.privateKeyPem },
    { domain: DOMAIN, selector: 'ed1', algorithm: 'ed25519-sha256', privateKeyPem: ed.privateKeyPem },
  ]);
  return { signed, records };
}

describe('dual signing: RSA-SHA256 and Ed25519-SHA256 (RFC 8463)', () => {
  it('publishes an Ed25519 key as the raw 32-byte key, not its SPKI', async () => {
    const ed = await generateDkimKey('ed25519-sha256');
    expect(Buffer.from(ed.publicKeyBase64, 'base64')).toHaveLength(32);
    expect(dkimTxtRecord(ed.publicKeyBase64, 'ed25519-sha256')).toBe(`v=DKIM1; k=ed25519; p=${ed.publicKeyBase64}`);
  });

  it('puts two DKIM-Signature fields on the message, RSA first, and mailauth verifies both', async () => {
    const { signed, records } = await dualSigned();
    const fields = signed.toString('latin1').match(/^DKIM-Signature:.*(?:\r\n[ \t].*)*/gm)!;
    expect(fields).toHaveLength(2);
    expect(fields[0]).toMatch(/a=rsa-sha256/);
    expect(fields[0]).toMatch(/s=rsa1/);
    expect(fields[1]).toMatch(/a=ed25519-sha256/);
    expect(fields[1]).toMatch(/s=ed1/);

    const dns = await startTestDns();
    onTestFinished(() => dns.close());
    for (const [name, txt] of Object.entries(records)) dns.set(name, 'TXT', txt);
    expect(await mailauthVerdict(signed, dns.address)).toEqual(['pass', 'pass']);

    // Each signature stands on its own: a wrong Ed25519 record fails that one only.
    const other = await generateDkimKey('ed25519-sha256');
    dns.set(`ed1._domainkey.${DOMAIN}`, 'TXT', dkimTxtRecord(other.publicKeyBase64, 'ed25519-sha256'));
    expect(await mailauthVerdict(signed, dns.address)).toEqual(['pass', 'fail']);
  });

  it.skipIf(!dkimpyPython)(`dkimpy verifies both signatures (skipped when ${DKIMPY_MISSING})`, async () => {
    const { signed, records } = await dualSigned();
    expect(dkimpyVerdicts(signed, records)).toEqual(['pass', 'pass']);
    const other = await generateDkimKey('rsa-sha256');
    expect(dkimpyVerdicts(signed, { ...records, [`rsa1._domainkey.${DOMAIN}`]: dkimTxtRecord(other.publicKeyBase64) })).toEqual(['fail', 'pass']);
  });

  it('refuses to sign with a key of another type than its algorithm says', async () => {
    const rsa = await generateDkimKey('rsa-sha256');
    await expect(signMessage(MESSAGE, { domain: DOMAIN, selector: 'x1', algorithm: 'ed25519-sha256', privateKeyPem: rsa.privateKeyPem })).rejects.toThrow(
      /DKIM key x1 for dual\.test is rsa, expected ed25519/,
    );
  });
});
