import type { Clock } from '../../src/core/ports.ts';

/** A clock that moves only when the test says so. */
export class ManualClock implements Clock {
  constructor(private ms = Date.parse('2026-11-21T10:00:00.000Z')) {}
  now = (): number => this.ms;
  set(iso: string | number): void {
    this.ms = typeof iso === 'number' ? iso : Date.parse(iso);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}
