// Everything a bench started and has not stopped yet, stopped newest first however the bench
// ends: normally, by an error, by a watchdog, or by SIGINT/SIGTERM.

interface Entry {
  stop: () => Promise<void>;
  stopping?: Promise<void>;
}

const running: Entry[] = [];
let signal: NodeJS.Signals | undefined;

/** Stops one entry once; whoever asks again (a signal and the bench at once) waits for the same stop. */
function stopEntry(entry: Entry): Promise<void> {
  entry.stopping ??= entry
    .stop()
    .catch((err: unknown) => console.error(`while stopping: ${String(err)}`))
    .finally(() => running.splice(running.indexOf(entry) >>> 0, 1));
  return entry.stopping;
}

/** Registers how to stop something just started; the returned function stops it now (once). */
export function started(stop: () => Promise<void>): () => Promise<void> {
  const entry: Entry = { stop };
  running.push(entry);
  // Started while a signal stops everything: it goes too.
  if (signal) void stopEntry(entry);
  return () => stopEntry(entry);
}

export async function stopAll(): Promise<void> {
  for (const entry of [...running].reverse()) await stopEntry(entry);
}

/** The signal that is ending the bench, if one is: its steps' failures are then not news. */
export const interruptedBy = (): NodeJS.Signals | undefined => signal;

/** On SIGINT or SIGTERM: stop everything, then exit. */
export function stopAllOnSignals(): void {
  for (const s of ['SIGINT', 'SIGTERM'] as const) {
    process.once(s, () => {
      signal = s;
      console.error(`${s}: stopping what the bench started`);
      void stopAll().finally(() => process.exit(s === 'SIGINT' ? 130 : 143));
    });
  }
}
