import { InvalidArgumentError, type Command } from 'commander';
import type { Config } from '../config/schema.ts';
import type { Services } from '../services.ts';

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
      this.services = await createServices(config);
    }
    return this.services;
  }

  async close(): Promise<void> {
    await this.services?.close();
    this.services = null;
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
