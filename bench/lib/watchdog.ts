// A bench step that stops making progress ends the bench, saying what it waited for, rather
// than hang a shared machine until someone notices.

export class StalledError extends Error {}

/**
 * Runs `run`, which calls `beat()` at every sign of progress; rejects with a StalledError that
 * names `what()` once `quietMs` pass without one. The step itself is left to the caller's
 * clean-up (stopping what it started ends it).
 */
export async function watched<T>(what: () => string, quietMs: number, run: (beat: () => void) => Promise<T>): Promise<T> {
  let last = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setInterval(
      () => {
        if (Date.now() - last >= quietMs) reject(new StalledError(`no progress for ${Math.round(quietMs / 1000)} s waiting for ${what()}`));
      },
      Math.min(1000, quietMs),
    );
  });
  const running = run(() => (last = Date.now()));
  // Once the step is abandoned, its own failure (a stopped peer) is not news.
  running.catch(() => undefined);
  try {
    return await Promise.race([running, stalled]);
  } finally {
    clearInterval(timer);
  }
}
