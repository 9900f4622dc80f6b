import { createRequire } from 'node:module';

type Mailparser = typeof import('mailparser');

let loaded: Mailparser | null = null;

/**
 * mailparser, loaded on first use rather than with the services: it and its charset tables are a
 * quarter of a CLI command's start, and most commands read no mail.
 */
export function mailparser(): Mailparser {
  return (loaded ??= createRequire(import.meta.url)('mailparser') as Mailparser);
}
