import type { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.ts';

/** Every command under `root`, with the words that invoke it (`['domain', 'add']`). */
function walk(root: Command, path: string[] = []): { path: string[]; command: Command }[] {
  return root.commands.flatMap((c) => [{ path: [...path, c.name()], command: c }, ...walk(c, [...path, c.name()])]);
}

/** What `mailsvc PATH... --help` prints, run in this process (commander exits; we catch that). */
async function helpOf(path: string[]): Promise<string> {
  const { program } = buildProgram();
  let out = '';
  for (const c of [program, ...walk(program).map((e) => e.command)]) {
    c.exitOverride();
    c.configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (out += s) });
  }
  await expect(program.parseAsync(['node', 'mailsvc', ...path, '--help'])).rejects.toMatchObject({ code: 'commander.helpDisplayed' });
  return out;
}

const ownOptions = (c: Command): readonly Option[] => c.options;
const squash = (s: string) => s.replace(/\s+/g, ' ');

describe('CLI help', () => {
  const { program } = buildProgram();
  const commands = walk(program);

  it('covers the whole command tree', () => {
    const names = commands.map((e) => e.path.join(' '));
    for (const expected of [
      'serve',
      'migrate',
      'workspace create',
      'key revoke',
      'domain verify',
      'suppression import',
      'queue retry',
      'send',
      'usage',
      'bounce explain',
      'inbox show',
    ]) {
      expect(names).toContain(expected);
    }
  });

  it('gives every command and every option a description', () => {
    const missing = [
      ...commands.filter((e) => !e.command.description().trim()).map((e) => `command "${e.path.join(' ')}"`),
      ...[{ path: [] as string[], command: program }, ...commands].flatMap((e) =>
        ownOptions(e.command)
          .filter((o) => !o.description?.trim())
          .map((o) => `option ${o.flags} of "${['mailsvc', ...e.path].join(' ')}"`),
      ),
    ];
    expect(missing).toEqual([]);
  });

  it('lists each option and subcommand, with its description, in the --help of every command', async () => {
    const top = squash(await helpOf([]));
    for (const c of program.commands) expect(top).toContain(`${c.name()}`);
    for (const c of program.commands) expect(top).toContain(squash(c.description()));
    expect(top).toContain('--config <file>');

    for (const { path, command } of commands) {
      const help = squash(await helpOf(path));
      expect(help, path.join(' ')).toMatch(new RegExp(`^Usage: mailsvc ${path.join(' ')}\\b`));
      expect(help, path.join(' ')).toContain(squash(command.description()));
      for (const o of command.options) {
        expect(help, `${path.join(' ')} ${o.flags}`).toContain(o.flags);
        expect(help, `${path.join(' ')} ${o.flags}`).toContain(squash(o.description));
      }
      for (const sub of command.commands) {
        expect(help, `${path.join(' ')} ${sub.name()}`).toContain(squash(sub.description()));
      }
    }
  });
});
