import { InvalidArgumentError, type Command } from 'commander';
import { loadConfig } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import { createServices, type Services } from '../services.ts';

/** Lazily built services for one CLI invocation, honouring the global --config option. */
export class CliContext {
  private services: Services | null = null;

  constructor(private readonly program: Command) {}

  config(overrides?: Record<string, unknown>): Config {
    const { config } = this.program.opts<{ config?: string }>();
    return loadConfig({ file: config, overrides });
  }

  async open(): Promise<Services> {
    this.services ??= await createServices(this.config());
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
