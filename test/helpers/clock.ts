import type { Clock } from '../../src/core/ports.ts';

/** A clock that moves only when the test says so. */
export class ManualClock implements Clock {
  private ms: number;

  constructor(start: string | number = '2026-11-21T10:00:00.000Z') {
    this.ms = typeof start === 'number' ? start : Date.parse(start);
  }

  now = (): number => this.ms;

  set(at: string | number): void {
    this.ms = typeof at === 'number' ? at : Date.parse(at);
  }

  advance(ms: number): void {
    this.ms += ms;
  }
}
