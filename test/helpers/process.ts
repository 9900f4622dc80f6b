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

/** `bin/mailsvc --config FILE serve` as a real child process; resolves once the API listens. */
export async function spawnServe(configFile: string, args: string[] = []): Promise<ServeProcess> {
  // The listening line is logged at info level.
  const child = spawn(process.execPath, [CLI, '--config', configFile, 'serve', '--http-port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, MAILSVC_LOG_LEVEL: 'info' },
  });
  let log = '';
  child.stdout!.on('data', (d) => (log += d));
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr!.on('data', (d) => {
      log += d;
      const m = /HTTP API listening on [\d.]+:(\d+)/.exec(log);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${log}`)));
  });
  const exited = once(child, 'exit');
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
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
