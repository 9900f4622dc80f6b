import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GatheredLines } from '../../src/log/gathered-lines.ts';

/** A sink that records each write, and a clock the test moves. */
function world(lingerMs = 50, maxBytes = 64) {
  const writes: string[] = [];
  let waiter: (() => void) | null = null;
  let now = 1_000;
  const lines = new GatheredLines(
    {
      write: (text: string) => {
        writes.push(text);
        waiter?.();
      },
    },
    () => now,
    lingerMs,
    maxBytes,
  );
  const nextWrite = () => new Promise<void>((resolve) => (waiter = resolve));
  return { lines, writes, nextWrite, advance: (ms: number) => (now += ms) };
}

describe('log lines gathered while they come fast', () => {
  it('writes every line at once until the server is up', () => {
    const { lines, writes } = world();
    lines.write('a\n');
    lines.write('b\n');
    lines.write('c\n');
    expect(writes).toStrictEqual(['a\n', 'b\n', 'c\n']);
  });

  it('then writes a line after a quiet spell at once and the lines close behind it together, within the linger', async () => {
    const { lines, writes, nextWrite, advance } = world();
    lines.gatherFromNowOn();
    lines.write('first\n');
    advance(5);
    const written = nextWrite();
    lines.write('second\n');
    lines.write('third\n');
    expect(writes).toStrictEqual(['first\n']);
    await written;
    expect(writes).toStrictEqual(['first\n', 'second\nthird\n']);
    advance(500);
    lines.write('later\n');
    expect(writes.at(-1)).toBe('later\n');
  });

  it('writes the gathered lines as soon as they reach the size bound, and what waits on flush', () => {
    const { lines, writes, advance } = world(50, 16);
    lines.gatherFromNowOn();
    lines.write('0\n');
    advance(1);
    lines.write('12345678\n');
    expect(writes).toStrictEqual(['0\n']);
    lines.write('abcdefgh\n');
    expect(writes).toStrictEqual(['0\n', '12345678\nabcdefgh\n']);
    lines.write('tail\n');
    lines.flush();
    expect(writes).toStrictEqual(['0\n', '12345678\nabcdefgh\n', 'tail\n']);
  });

  it("loses no line of the server's logger when the process exits while lines wait", () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const script = [
      "import { createLogger, gatherFromNowOn } from './src/log/logger.ts';",
      "const log = createLogger('info');",
      "log.info('up');",
      'gatherFromNowOn(log);',
      "for (let i = 0; i < 200; i++) log.info({ i }, 'line');",
      'process.exit(3);',
    ].join('\n');
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(child.status).toBe(3);
    const numbers = child.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; i?: number })
      .filter((line) => line.msg === 'line')
      .map((line) => line.i);
    expect(numbers).toStrictEqual(Array.from({ length: 200 }, (_, i) => i));
  });
});
