/** Per-recipient render work below this many bytes of text parts is light: it never waits. */
export const LIGHT_RENDER_BYTES = 256 * 1024;
/** Heavy render work in flight at once, by the text parts' bytes (a rendered copy is a few times that in memory). */
export const HEAVY_RENDER_BUDGET = 2 * 1024 * 1024;

interface Task {
  weight: number;
  start(): void;
}

/**
 * Who renders and signs next. A recipient's copy costs about its text parts' size when a render
 * step rewrites them (tracked links, unsubscribe URLs), many times that with tracking on; light
 * work (most mail) starts at once, heavy work waits for room in a byte budget, and the waiting
 * work is taken round-robin by workspace, one task per workspace in turn, not first come first
 * served. A workspace's 50-recipient 10 MB newsletter thus renders one copy at a time while
 * another workspace's mail passes beside it, and memory held by renders in flight stays bounded:
 * the budget, or one task when a single task is over it.
 */
export class FairScheduler {
  /** Workspaces with heavy work waiting or in flight. */
  private readonly workspaces = new Map<number, Lane>();
  private inFlightWeight = 0;
  private inFlightHeavy = 0;
  private waitingCount = 0;
  private starts = 0;

  constructor(private readonly options: { lightBytes?: number; budgetBytes?: number; changed?: (waiting: number) => void } = {}) {}

  /** Tasks waiting for their turn (their rows are claimed but cost nothing yet). */
  get waiting(): number {
    return this.waitingCount;
  }

  run<T>(workspaceId: number, weight: number, task: () => Promise<T>): Promise<T> {
    if (weight < (this.options.lightBytes ?? LIGHT_RENDER_BYTES)) return task();
    return new Promise<T>((resolve, reject) => {
      let lane = this.workspaces.get(workspaceId);
      if (!lane) this.workspaces.set(workspaceId, (lane = { queue: [], inFlight: 0, lastStart: -1 }));
      const own = lane;
      own.queue.push({
        weight,
        start: () => {
          this.inFlightWeight += weight;
          this.inFlightHeavy++;
          own.inFlight++;
          task()
            .then(resolve, reject)
            .finally(() => {
              this.inFlightWeight -= weight;
              this.inFlightHeavy--;
              own.inFlight--;
              if (own.inFlight === 0 && own.queue.length === 0) this.workspaces.delete(workspaceId);
              this.pump();
            });
        },
      });
      this.waitingCount++;
      this.pump();
      this.options.changed?.(this.waitingCount);
    });
  }

  /**
   * Starts waiting tasks while they fit: each time the head task of the workspace that started
   * one least recently (one that never did first), so a workspace that just arrived goes next.
   */
  private pump(): void {
    let started = 0;
    for (;;) {
      let next: Lane | null = null;
      for (const lane of this.workspaces.values()) {
        if (lane.queue.length > 0 && (next === null || lane.lastStart < next.lastStart)) next = lane;
      }
      if (next === null) break;
      const head = next.queue[0]!;
      const fits = this.inFlightHeavy === 0 || this.inFlightWeight + head.weight <= (this.options.budgetBytes ?? HEAVY_RENDER_BUDGET);
      if (!fits) break;
      next.queue.shift();
      next.lastStart = ++this.starts;
      this.waitingCount--;
      started++;
      head.start();
    }
    if (started > 0) this.options.changed?.(this.waitingCount);
  }
}

interface Lane {
  queue: Task[];
  /** This workspace's heavy tasks running now. */
  inFlight: number;
  /** When it last started a task (a count of starts); -1: not since it had nothing left. */
  lastStart: number;
}
