import type { AddressObject } from 'mailparser';
import { mailparser } from '../messages/mailparser.ts';
import type { RawField } from './headers.ts';

/** The header values a submission is read for, as mailparser's `simpleParser` gives them. */
export interface HeaderValues {
  from?: AddressObject;
  sender?: AddressObject;
  to?: AddressObject | AddressObject[];
  cc?: AddressObject | AddressObject[];
  replyTo?: AddressObject;
  subject?: string;
  messageId?: string;
}

interface HeaderProcessor {
  processHeaders(lines: { key: string; line: string }[]): Map<string, unknown>;
}

/**
 * mailparser's own header decoding (address lists, encoded words, Message-ID brackets), called
 * on the fields already split rather than by streaming the header block through a new parser
 * per message: the stream machinery around it was about 6% of the event loop's time when
 * relaying. `processHeaders` is what every MailParser runs on each part's header lines; it keeps
 * no state between calls, so one instance serves every message. test/submission/header-values
 * checks it against `simpleParser` on the cases that matter.
 */
let reader: HeaderProcessor | null = null;

/** Made at the first submission, or when the submission role starts (`warmHeaderReader`). */
function headerReader(): HeaderProcessor {
  return (reader ??= new (mailparser().MailParser)() as unknown as HeaderProcessor);
}

/** Loads the reader now, so a listener's first message does not wait on the load. */
export function warmHeaderReader(): void {
  headerReader();
}

/** The fields read; every other one (Received, DKIM-Signature, List-*) is passed over unparsed. */
const READ = new Set(['from', 'sender', 'to', 'cc', 'reply-to', 'subject', 'message-id']);

export function headerValues(fields: RawField[]): HeaderValues {
  const headers = headerReader().processHeaders(fields.filter((f) => READ.has(f.name)).map((f) => ({ key: f.name, line: f.raw })));
  return {
    from: headers.get('from') as AddressObject | undefined,
    sender: headers.get('sender') as AddressObject | undefined,
    to: headers.get('to') as AddressObject | AddressObject[] | undefined,
    cc: headers.get('cc') as AddressObject | AddressObject[] | undefined,
    replyTo: headers.get('reply-to') as AddressObject | undefined,
    subject: headers.get('subject') as string | undefined,
    messageId: headers.get('message-id') as string | undefined,
  };
}
