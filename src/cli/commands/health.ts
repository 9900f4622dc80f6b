import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { positiveInt } from '../context.ts';
import { printLines } from '../output.ts';

/** Where a server with this configuration answers: its own host, or loopback when it listens on all. */
function healthUrl(host: string, port: number): string {
  const target = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${target.includes(':') ? `[${target}]` : target}:${port}/healthz`;
}

export function registerHealthcheckCommand(program: Command, ctx: CliContext): void {
  program
    .command('healthcheck')
    .description("exit 0 when the HTTP API at this configuration's http.host and http.port answers GET /healthz (for container health checks)")
    .option('--timeout <seconds>', 'give up after this many seconds', positiveInt, 5)
    .action(async (opts: { timeout: number }) => {
      const { http } = await ctx.config();
      const url = healthUrl(http.host, http.port);
      let res: Response;
      try {
        res = await fetch(url, { signal: AbortSignal.timeout(opts.timeout * 1000) });
      } catch (err) {
        const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
        throw new Error(`${url}: ${cause}`, { cause: err });
      }
      if (!res.ok) throw new Error(`${url} answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
      printLines([`${url}: ok`]);
    });
}
