// How much of a report the parser examines. Reports come from anyone on the internet, so every
// step is linear in its input and each of these caps bounds what one step can be made to read.
// A genuine report is far inside every one of them: a DSN about our mail names one recipient
// (delivery sends one transaction per recipient), its notice text is a few kilobytes, and its
// header blocks are a few dozen lines. Everything past a cap is ignored, never an error.

export const REPORT_LIMITS = {
  /** Bytes of one header block read (Postfix's header_size_limit is 102400). */
  headerBlockBytes: 102_400,
  /** Header fields kept from one block; Received chains of real reports stay under 100. */
  headerFields: 1_000,
  /** MIME parts in one message, at every depth together. */
  mimeParts: 256,
  /** Nesting of multiparts (a notice wrapping a report wrapping a message is 3). */
  mimeDepth: 6,
  /** Characters of decoded human-readable text examined for notices and reply codes. */
  humanText: 256 * 1024,
  /** Characters of one line a notice pattern sees (RFC 5322 §2.1.1 caps lines at 998). */
  lineChars: 998,
  /** Lines of a notice searched for recipients and for the start of the quoted original. */
  noticeLines: 5_000,
  /** Characters the classifier reads of one diagnostic or notice context. */
  classifyText: 8 * 1024,
  /** Recipients taken from one report; the rest are ignored. */
  recipients: 1_000,
  /** Characters of a message/delivery-status part read. */
  deliveryStatus: 1024 * 1024,
} as const;
