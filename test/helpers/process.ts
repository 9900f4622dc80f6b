import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { onTestFinished } from 'vitest';
import { CLI } from './cli.ts';

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  log(): string;
  /** SIGKILL: no chance to flush anything. */
  kill(): Promise<void>;
  stop(): Promise<number | null>;
}

/**
 * `bin/mailsvc --config FILE serve` as a real child process; resolves once the API listens.
 * `tailChars` keeps only the end of its log, for a process that logs every request of a long run.
 */
export async function spawnServe(configFile: string, args: string[] = [], options: { tailChars?: number } = {}): Promise<ServeProcess> {
  const tail = options.tailChars ?? Infinity;
  // The listening line is logged at info level.
  const child = spawn(process.execPath, [CLI, '--config', configFile, 'serve', '--http-port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, MAILSVC_LOG_LEVEL: 'info' },
  });
  let log = '';
  const keep = (d: Buffer): void => {
    log += d.toString();
    if (log.length > tail) log = log.slice(-tail);
  };
  child.stdout!.on('data', keep);
  const exited = once(child, 'exit');
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  const port = await new Promise<number>((resolve, reject) => {
    let head = '';
    const onData = (d: Buffer): void => {
      head += d.toString();
      const m = /HTTP API listening on [\d.]+:(\d+)/.exec(head);
      if (!m) return;
      // Only the start is scanned; afterwards stderr joins the log like stdout.
      child.stderr!.off('data', onData).on('data', keep);
      keep(Buffer.from(head));
      resolve(Number(m[1]));
    };
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${log}${head}`)));
  });
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    log: () => log,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      child.kill('SIGTERM');
      const [code] = await exited;
      return code as number | null;
    },
  };
}
