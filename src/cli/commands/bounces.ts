import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { parseReport } from '../../bounces/index.ts';

type Report = Awaited<ReturnType<typeof parseReport>>;
const bounces = () => import('../../bounces/index.ts');

/** Why a file could not be read, in the words an operator expects. */
function readError(file: string, err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOENT') return `${file}: no such file`;
  if (err.code === 'EISDIR') return `${file}: is a directory`;
  if (err.code === 'EACCES') return `${file}: permission denied`;
  return `${file}: ${err.message}`;
}

/** Reads and parses each file, printing what `print` makes of it; unreadable files fail at the end. */
async function eachReport(files: string[], print: (file: string, report: Report) => string | Promise<string>): Promise<void> {
  // Pure parsing: no configuration or database is opened, so it runs anywhere.
  const { parseReport } = await bounces();
  const unreadable: string[] = [];
  for (const file of files) {
    let raw: Buffer;
    try {
      raw = await readFile(file);
    } catch (err) {
      unreadable.push(readError(file, err as NodeJS.ErrnoException));
      continue;
    }
    process.stdout.write(`${await print(file, await parseReport(raw))}\n`);
  }
  if (unreadable.length > 0) throw new Error(`cannot read ${unreadable.join('; ')}`);
}

export function registerBounceCommands(program: Command): void {
  const bounce = program.command('bounce').description('bounce and complaint reports');

  bounce
    .command('parse <files...>')
    .description('parse DSN, ARF, auto-reply or notice files; one JSON line per file')
    .option('--json', 'print JSON (always on: one JSON line per file)')
    .option('--explain', 'print, per recipient, the signals found and the rule that decided (as `bounce explain`)')
    .action(async (files: string[], opts: { explain?: boolean; json?: boolean }) => {
      if (opts.explain) return eachReport(files, (file, report) => explainText(file, report, opts.json));
      return eachReport(files, async (file, report) => JSON.stringify((await bounces()).toParseOutput(file, report)));
    });

  bounce
    .command('explain <files...>')
    .description('per recipient: the signals found (status, reply code, command, words) and the rule that decided')
    .option('--json', 'one JSON line per file instead of text')
    .action(async (files: string[], opts: { json?: boolean }) => eachReport(files, (file, report) => explainText(file, report, opts.json)));
}

async function explainText(file: string, report: Report, json?: boolean): Promise<string> {
  const { formatExplanation, toExplainOutput } = await bounces();
  const out = toExplainOutput(file, report);
  return json ? JSON.stringify(out) : formatExplanation(out);
}
