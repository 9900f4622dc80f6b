// Failure notices that are not RFC 3464 reports: qmail, Exim, Exchange 2003, Gmail, Yahoo,
// DragonFly, Notes and the rest write a human-readable text that names each failed recipient
// and then quotes the remote reply. They differ in wording but share a shape: the recipient
// stands out on a line of its own (or in a short lead-in sentence), and the reply follows it up
// to the next recipient or the quoted original message.

import { ADDRESS_IN_TEXT, cleanAddress } from './codes.ts';
import { REPORT_LIMITS } from './limits.ts';
import { NOTICE_LEADS, ORIGINAL_MARKERS } from './notice-patterns.ts';

export interface NoticeEntry {
  address: string;
  block: string; // the notice text about this recipient
}

/** Cuts the notice before the quoted original message, which names the recipients again. */
export function noticeText(text: string): string {
  // Each marker counts from its first matching line; one that first matches on the very first
  // line says nothing (the text starts with it), as before the markers were read line by line.
  const pending = new Set(ORIGINAL_MARKERS.map((m) => m.pattern));
  let offset = 0;
  let lines = 0;
  for (const line of text.split('\n')) {
    if (++lines > REPORT_LIMITS.noticeLines) break;
    const probe = line.slice(0, REPORT_LIMITS.lineChars);
    for (const pattern of pending) {
      if (!pattern.test(probe)) continue;
      if (offset > 0) return text.slice(0, offset);
      pending.delete(pattern);
    }
    if (pending.size === 0) break;
    offset += line.length + 1;
  }
  return text;
}

// Roles that write notices or receive complaints, never the recipient a notice is about, when
// they appear in a sentence ("please contact <postmaster@example.net>").
const SERVICE_LOCAL = /^(?:postmaster|mailer-daemon|mail-daemon|abuse|noreply|no-reply|support|help|root|hostmaster|webmaster)$/i;

interface Hit {
  address: string;
  index: number; // offset of the line in the notice
  strong: boolean; // found in a recipient position, not just mentioned in a sentence
  line?: string; // set when that line alone is the diagnostic
}

function hitsIn(notice: string, exclude: Set<string>): Hit[] {
  const hits: Hit[] = [];
  let offset = 0;
  let lines = 0;
  for (const whole of notice.split('\n')) {
    if (++lines > REPORT_LIMITS.noticeLines || hits.length >= REPORT_LIMITS.recipients) break;
    const line = whole.slice(0, REPORT_LIMITS.lineChars);
    for (const { pattern, strong, oneLine } of NOTICE_LEADS) {
      const m = pattern.exec(line);
      if (!m) continue;
      const address = cleanAddress(m[1]);
      if (!address || exclude.has(address.toLowerCase())) continue;
      if (!strong && SERVICE_LOCAL.test(address.split('@')[0]!)) continue;
      hits.push({ address, index: offset, strong, line: oneLine ? line : undefined });
      break;
    }
    offset += whole.length + 1;
  }
  return hits;
}

/**
 * Finds the failed recipients in a notice and the stretch of text about each. `listed` are the
 * addresses of an X-Failed-Recipients header (Exim, Google), which win when present.
 */
export function parseNotice(text: string, listed: string[], exclude: Set<string>): NoticeEntry[] {
  const notice = noticeText(text);
  let hits = hitsIn(notice, exclude);
  if (hits.some((h) => h.strong)) hits = hits.filter((h) => h.strong);
  const first = new Map<string, Hit>();
  for (const h of hits) if (!first.has(h.address.toLowerCase())) first.set(h.address.toLowerCase(), h);
  let ordered = [...first.values()];

  if (listed.length > 0) {
    // The header is the authoritative list; the text only tells us where each one's reply is.
    const lower = notice.toLowerCase();
    ordered = listed.slice(0, REPORT_LIMITS.recipients).map((address) => {
      const found = first.get(address.toLowerCase());
      const index = found ? found.index : mentionIndex(notice, lower, address);
      return { address, index, strong: true, line: found?.line };
    });
  }
  const starts = ordered
    .map((h) => h.index)
    .filter((i) => i >= 0)
    .sort((a, b) => a - b);
  return ordered.map((h) => {
    if (h.index < 0) return { address: h.address, block: notice.slice(0, REPORT_LIMITS.classifyText) };
    if (h.line) return { address: h.address, block: h.line };
    const next = starts.find((i) => i > h.index) ?? notice.length;
    // The reply ends at the first paragraph break after it; what follows is boilerplate
    // ("Рекомендуем Вам проверить...", "Please check the address and try again").
    let block = untilParagraphEnd(notice.slice(h.index, next));
    // A block that is only the address, or that quotes no reply while the notice is about this
    // one recipient (the reply is written above it, as in "Error: Invalid user address ...
    // RCPT TO: x@y"): read the whole notice instead.
    if (!/[A-Za-z]{3,}/.test(block.replace(ADDRESS_IN_TEXT, ''))) block = notice;
    else if (ordered.length === 1 && !/\b[45]\d\d\b|\b[45]\.\d\.\d/.test(block)) block = notice;
    // What is read about one recipient is bounded, however long the notice.
    return { address: h.address, block: block.slice(0, REPORT_LIMITS.classifyText) };
  });
}

function mentionIndex(notice: string, lower: string, address: string): number {
  const i = lower.indexOf(address.toLowerCase());
  if (i < 0) return -1;
  return notice.lastIndexOf('\n', i) + 1;
}

/** A forwarded notice quoted with "> " ("Fwd: Returned mail: see transcript for details"). */
export function unquote(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const quoted = lines.filter((l) => l.startsWith('>') && !l.startsWith('>>>')).length;
  return quoted > lines.length / 3 ? text.replace(/^> ?/gm, '') : text;
}

function untilParagraphEnd(block: string): string {
  const reply = /\b[45]\d\d\b|\b[45]\.\d{1,3}\.\d{1,3}\b/.exec(block);
  if (!reply) return block;
  const end = block.slice(reply.index).search(/\n[ \t]*\n/);
  return end < 0 ? block : block.slice(0, reply.index + end);
}
