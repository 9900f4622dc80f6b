import type { Role } from './types.ts';

/**
 * Which roles of this process are running. `/healthz` answers 200 only when none is missing, so
 * a supervisor or a script that waits for it may send over any listener at once: a role counts
 * as running once its starter returned, which for a listening role is after its last listener
 * accepts connections (the submission role may first spend seconds generating a certificate).
 */
export class Readiness {
  private readonly running = new Set<Role>();

  constructor(private readonly expected: readonly Role[]) {}

  started(role: Role): void {
    this.running.add(role);
  }

  /** Before a role stops accepting: from then on the process is not ready. */
  stopping(role: Role): void {
    this.running.delete(role);
  }

  /** The roles of this process not running now, in start order. */
  notReady(): Role[] {
    return this.expected.filter((role) => !this.running.has(role));
  }
}
