import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { parseReport, toParseOutput } from '../../bounces/index.ts';

/** Why a file could not be read, in the words an operator expects. */
function readError(file: string, err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOENT') return `${file}: no such file`;
  if (err.code === 'EISDIR') return `${file}: is a directory`;
  if (err.code === 'EACCES') return `${file}: permission denied`;
  return `${file}: ${err.message}`;
}

export function registerBounceCommands(program: Command): void {
  const bounce = program.command('bounce').description('bounce and complaint reports');

  bounce
    .command('parse <files...>')
    .description('parse DSN, ARF, auto-reply or notice files; one JSON line per file')
    .option('--json', 'print JSON (always on: one JSON line per file)')
    .action(async (files: string[]) => {
      // Pure parsing: no configuration or database is opened, so it runs anywhere.
      const unreadable: string[] = [];
      for (const file of files) {
        let raw: Buffer;
        try {
          raw = await readFile(file);
        } catch (err) {
          unreadable.push(readError(file, err as NodeJS.ErrnoException));
          continue;
        }
        process.stdout.write(`${JSON.stringify(toParseOutput(file, await parseReport(raw)))}\n`);
      }
      if (unreadable.length > 0) throw new Error(`cannot read ${unreadable.join('; ')}`);
    });
}
