import { InvalidArgumentError, type Command } from 'commander';
import type { Config } from '../config/schema.ts';
import { ServiceError } from '../core/errors.ts';
import type { Services } from '../services.ts';
import type { WorkspaceRow } from '../store/workspaces.ts';

/**
 * Lazily built services for one CLI invocation, honouring the global --config option.
 * Configuration and services are imported on first use, so `--help` and commands that need
 * neither never load the database driver or the server.
 */
export class CliContext {
  private services: Services | null = null;

  constructor(private readonly program: Command) {}

  async config(overrides?: Record<string, unknown>): Promise<Config> {
    const { loadConfig } = await import('../config/load.ts');
    const { config } = this.program.opts<{ config?: string }>();
    return loadConfig({ file: config, overrides });
  }

  async open(): Promise<Services> {
    if (!this.services) {
      const config = await this.config();
      const { createServices } = await import('../services.ts');
      this.services = await createServices({ ...config, log: { level: oneShotLevel(config.log.level) } });
    }
    return this.services;
  }

  /**
   * The workspace named by --workspace, or the only one there is: commands that act within one
   * workspace need no --workspace until there are several.
   */
  async workspace(name: string | undefined): Promise<WorkspaceRow> {
    const { tenancy } = await this.open();
    if (name !== undefined) return named('workspace', name, () => tenancy.workspaceByName(name));
    const all = await tenancy.listWorkspaces();
    if (all.length === 1) return all[0]!;
    if (all.length === 0) throw new Error('There is no workspace yet; create one with: mailsvc workspace create NAME');
    const names = all
      .slice(0, 10)
      .map((w) => w.name)
      .join(', ');
    throw new Error(`There are ${all.length} workspaces (${names}${all.length > 10 ? ', ...' : ''}); name one with --workspace`);
  }

  async close(): Promise<void> {
    await this.services?.close();
    this.services = null;
  }
}

const SEVERITY = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/**
 * One-shot commands log warnings and errors only (to stderr, like every log): their output is
 * what they print, and an info line per accepted message would only interleave with it in a
 * terminal. `serve` logs at the configured level.
 */
function oneShotLevel(level: Config['log']['level']): Config['log']['level'] {
  return SEVERITY.indexOf(level) < SEVERITY.indexOf('warn') ? 'warn' : level;
}

/**
 * Runs a lookup of one named thing. The services answer an unknown one with the API's bare
 * "Not found"; on the command line the message says what was not found.
 */
export async function named<T>(kind: string, name: string | number, lookup: () => Promise<T>): Promise<T> {
  try {
    return await lookup();
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'NOT_FOUND') throw new Error(`${kind} ${JSON.stringify(String(name))} not found`, { cause: err });
    throw err;
  }
}

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

export function onOff(value: string): boolean {
  if (value === 'on' || value === 'true') return true;
  if (value === 'off' || value === 'false') return false;
  throw new InvalidArgumentError('must be on or off');
}
