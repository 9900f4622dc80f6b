// Reports built to make a careless parser slow: each family repeats the one construct that once
// took time quadratic in its length. Shared by the parser tests, the CLI test, the inbound fuzz
// suite and bench/bounces-linear.ts.

const NOTICE_HEAD = `Return-Path: <>
From: MAILER-DAEMON@mx.example.org (Mail Delivery System)
To: b+abc@bounces.mailsvc.test
Subject: Undelivered Mail Returned to Sender
MIME-Version: 1.0
`;

function fill(unit: string, bytes: number): string {
  return unit.repeat(Math.max(1, Math.ceil(bytes / unit.length))).slice(0, bytes);
}

export type PathologicalKind = 'dashes' | 'qp-spaces' | 'html-lt' | 'header-continuations' | 'dsn-recipients' | 'nested-multipart';

export const PATHOLOGICAL_KINDS: readonly PathologicalKind[] = ['dashes', 'qp-spaces', 'html-lt', 'header-continuations', 'dsn-recipients', 'nested-multipart'];

/** A report of about `bytes` bytes of the given family. */
export function pathological(kind: PathologicalKind, bytes: number): Buffer {
  switch (kind) {
    case 'dashes':
      // A ruled line with no marker words: the original-message marker scanned it from every dash.
      return Buffer.from(`${NOTICE_HEAD}\nThis is the mail system.\n\n${fill('-', bytes)}\n<user@example.org>: 550 5.1.1 unknown\n`);
    case 'qp-spaces':
      // Trailing-space stripping in the quoted-printable decoder retried from every space.
      return Buffer.from(`${NOTICE_HEAD}Content-Type: text/plain\nContent-Transfer-Encoding: quoted-printable\n\na${fill(' ', bytes)}b\n`);
    case 'html-lt':
      // `<[^>]*>` tag stripping scanned to the end from every unclosed `<`.
      return Buffer.from(`${NOTICE_HEAD}Content-Type: text/html\n\n<html><body>${fill('<', bytes)}\n`);
    case 'header-continuations':
      // One header unfolded by string concatenation: every line copied the whole value again.
      return Buffer.from(`${NOTICE_HEAD}X-Long: start\n${fill(' continued header line\n', bytes)}\nbody\n`);
    case 'dsn-recipients': {
      const n = Math.max(1, Math.floor(bytes / 120));
      const notice: string[] = [];
      const fields: string[] = [];
      for (let i = 0; i < n; i++) {
        notice.push(`<user${i}@example.org>: host mx said: 550 5.1.1 unknown`);
        fields.push(`Final-Recipient: rfc822; user${i}@example.org\nAction: failed\nStatus: 5.1.1\n`);
      }
      return Buffer.from(
        `${NOTICE_HEAD}Content-Type: multipart/report; report-type=delivery-status; boundary="B"\n\n--B\nContent-Type: text/plain\n\n${notice.join('\n')}\n\n--B\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; mx.example.org\n\n${fields.join('\n')}\n--B--\n`,
      );
    }
    case 'nested-multipart': {
      // Parts inside parts inside parts, each with a boundary of its own, then many empty parts.
      const depth = 50;
      let open = '';
      for (let i = 0; i < depth; i++) open += `--b${i}\nContent-Type: multipart/mixed; boundary="b${i + 1}"\n\n`;
      const filler = fill(`--b${depth}\nContent-Type: text/plain\n\nx\n`, bytes);
      return Buffer.from(`${NOTICE_HEAD}Content-Type: multipart/mixed; boundary="b0"\n\n${open}${filler}`);
    }
  }
}
