import { writeFileSync } from 'node:fs';

/**
 * Gives the calling thread the name its Worker was started with, as newer Node does itself:
 * `top -H`, `ps -L` and the benches' per-thread CPU (bench/lib/threads.ts) tell the threads
 * apart by it. Linux keeps 15 bytes of a name; elsewhere nothing happens.
 */
export function nameThisThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // Not Linux, or /proc not mounted: the thread keeps the process's name.
  }
}
