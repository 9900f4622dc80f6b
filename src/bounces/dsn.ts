// RFC 3464 delivery status notifications: the machine-readable message/delivery-status part.

import { cleanAddress } from './codes.ts';
import { REPORT_LIMITS } from './limits.ts';
import { header, parseHeaders, type Header } from './mime.ts';

export interface DsnRecipient {
  address: string | null;
  /** Original-Recipient (RFC 3464 §2.3.1): the address before forwarding or alias expansion. */
  originalRecipient: string | null;
  action: string | null; // lowercased
  status: string | null;
  diagnosticType: string | null; // "smtp", "x-unix", "x-postfix", ... lowercased
  diagnostic: string;
  remoteMta: string | null;
}

export interface DeliveryStatus {
  reportingMta: string | null;
  recipients: DsnRecipient[];
}

/** "dns; mx.example.jp" → "mx.example.jp" (RFC 3464 §2.1.2 mta-name-type). */
export function stripType(value: string | null): string | null {
  if (!value) return null;
  const v = value
    .replace(/^[A-Za-z0-9-]+\s*;\s*/, '')
    .replace(/^\[|\]$/g, '')
    .trim();
  return v.length > 0 ? v : null;
}

const RECIPIENT_FIELDS = new Set(['final-recipient', 'original-recipient', 'x-actual-recipient']);

/**
 * Groups the fields into per-recipient blocks. RFC 3464 separates blocks with blank lines, but
 * some MTAs omit them, so a recipient field that the current block already has starts a new one.
 */
function recipientBlocks(groups: Header[][]): Header[][] {
  const blocks: Header[][] = [];
  for (const group of groups) {
    let current: Header[] | null = null;
    for (const f of group) {
      if (RECIPIENT_FIELDS.has(f.name) && (!current || current.some((x) => x.name === f.name))) {
        current = [];
        blocks.push(current);
      }
      current?.push(f);
    }
  }
  return blocks;
}

/** "failed (bad destination)" → "failed". */
function actionOf(value: string | null): string | null {
  if (value === null) return null;
  const paren = value.indexOf('(');
  return (paren < 0 ? value : value.slice(0, paren)).trim().toLowerCase();
}

export function parseDeliveryStatus(body: string): DeliveryStatus {
  const groups = body
    .slice(0, REPORT_LIMITS.deliveryStatus)
    .split(/\n[ \t]*\n/)
    .map(parseHeaders);
  const all = groups.flat();
  const reportingMta = stripType(header(all, 'reporting-mta'));
  const recipients: DsnRecipient[] = [];
  for (const block of recipientBlocks(groups).slice(0, REPORT_LIMITS.recipients)) {
    const address =
      cleanAddress(header(block, 'final-recipient')) ?? cleanAddress(header(block, 'x-actual-recipient')) ?? cleanAddress(header(block, 'original-recipient'));
    const diag = header(block, 'diagnostic-code') ?? '';
    const typed = /^([A-Za-z0-9-]+)\s*;\s*([\s\S]*)$/.exec(diag);
    recipients.push({
      address,
      originalRecipient: cleanAddress(header(block, 'original-recipient')),
      action: actionOf(header(block, 'action')),
      status: header(block, 'status'),
      diagnosticType: typed ? typed[1]!.toLowerCase() : null,
      diagnostic: (typed ? typed[2]! : diag).trim(),
      remoteMta: stripType(header(block, 'remote-mta')),
    });
  }
  return { reportingMta, recipients };
}
