/** What a coalescing poster sends: the messages of one turn of the event loop, in order. */
export interface Coalesced<M> {
  t: 'batch';
  messages: M[];
}

interface Pending<M> {
  message: M;
  moves: ArrayBuffer[] | undefined;
}

/**
 * Posts to another thread once per turn of the event loop: the messages of the turn go together
 * (in a `setImmediate`, after the I/O already read), with every buffer they transfer. Each post
 * wakes the other thread, and a reply a group commit releases for twenty sessions at once cost
 * twenty wake-ups. Order is kept; a message never waits past the end of the turn. When a turn's
 * batch cannot be posted (a value that cannot be copied between threads), its messages go one by
 * one, and each that still cannot is handed to `failed`, so one bad message costs only itself.
 */
export function coalescingPoster<M>(
  post: (batch: Coalesced<M>, transfer: ArrayBuffer[]) => void,
  failed: (message: M, err: Error) => void,
): (message: M, transfer?: ArrayBuffer[]) => void {
  let pending: Pending<M>[] = [];
  const flush = () => {
    const turn = pending;
    pending = [];
    try {
      post(
        { t: 'batch', messages: turn.map((p) => p.message) },
        turn.flatMap((p) => p.moves ?? []),
      );
    } catch {
      // A post that fails transfers nothing: each message still owns its buffers.
      for (const { message, moves } of turn) {
        try {
          post({ t: 'batch', messages: [message] }, moves ?? []);
        } catch (err) {
          failed(message, err as Error);
        }
      }
    }
  };
  return (message, moves) => {
    if (pending.length === 0) setImmediate(flush);
    pending.push({ message, moves });
  };
}
