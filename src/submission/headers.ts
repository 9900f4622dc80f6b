/**
 * The header block of a submitted message as a list of fields, each kept as its raw bytes
 * (latin1, folding included) so that what is not removed goes out exactly as submitted.
 * Every step is one scan over the block.
 */

export interface RawField {
  /** Lowercased field name. */
  name: string;
  /** The whole field, folded lines included, without its final CRLF. */
  raw: string;
}

/** The unfolded value of a field, trimmed. */
export function fieldValue(field: RawField): string {
  const colon = field.raw.indexOf(':');
  return field.raw
    .slice(colon + 1)
    .replace(/\r\n(?=[ \t])/g, '')
    .trim();
}

/**
 * Splits a CRLF-normalised header block (without the blank line) into fields. A line that is
 * neither a field nor a continuation is not a header at all: the caller refuses the message.
 */
export function splitFields(head: string): RawField[] | null {
  const fields: RawField[] = [];
  if (head === '') return fields;
  for (const line of head.split('\r\n')) {
    if (line === '') continue;
    if (line[0] === ' ' || line[0] === '\t') {
      const last = fields.at(-1);
      if (!last) return null;
      last.raw += `\r\n${line}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0 || !/^[!-9;-~]+$/.test(line.slice(0, colon).trimEnd())) return null;
    fields.push({ name: line.slice(0, colon).trimEnd().toLowerCase(), raw: line });
  }
  return fields;
}

export const joinFields = (fields: RawField[]): string => fields.map((f) => `${f.raw}\r\n`).join('');
