import { mailparser } from '../messages/mailparser.ts';
import type { MessageWithContent } from '../store/messages.ts';
import { prepareMessage, unsignedCopy } from './compose.ts';

export interface MessageSource {
  /** False once retention pruned the body: the rest is then empty. */
  available: boolean;
  headers: { name: string; value: string }[];
  html: string | null;
  text: string | null;
  raw: string | null;
}

/** Shown at most; a larger message is cut here (the console says so). */
export const PREVIEW_RAW_LIMIT = 2 * 1024 * 1024;

/**
 * A stored message as its recipients get it, before per-recipient rendering (tracking links,
 * unsubscribe URLs) and the DKIM signature: the same MIME delivery builds, read back by a mail
 * parser, so what the console shows is what was sent, not the fields it was built from.
 */
export async function messageSource(row: MessageWithContent, hostname: string): Promise<MessageSource> {
  if (row.content === null) return { available: false, headers: [], html: null, text: null, raw: null };
  return readMime(unsignedCopy(await prepareMessage(row, hostname)));
}

/** A MIME message as a mail client shows it: header fields, the HTML and text parts, the source. */
export async function readMime(raw: Buffer): Promise<MessageSource> {
  const parsed = await mailparser().simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true });
  return {
    available: true,
    headers: parsed.headerLines.map((h) => {
      const colon = h.line.indexOf(':');
      return {
        name: h.line.slice(0, colon),
        value: h.line
          .slice(colon + 1)
          .replace(/\r?\n[ \t]+/g, ' ')
          .trim(),
      };
    }),
    html: typeof parsed.html === 'string' ? parsed.html : null,
    text: parsed.text ?? null,
    raw: raw.subarray(0, PREVIEW_RAW_LIMIT).toString('utf8'),
  };
}
