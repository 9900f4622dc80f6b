import { Batcher } from '../core/batcher.ts';

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
 * (a batch that starts in a `setImmediate`, after the I/O already read), with every buffer they
 * transfer. Each post wakes the other thread, and a reply a group commit releases for twenty
 * sessions at once cost twenty wake-ups. Order is kept; a message never waits past the end of the
 * turn. When a turn's batch cannot be posted (a value that cannot be copied between threads), its
 * messages go one by one (a post that fails transfers nothing, so each still owns its buffers),
 * and each that still cannot is handed to `failed`, so one bad message costs only itself.
 */
export function coalescingPoster<M>(
  post: (batch: Coalesced<M>, transfer: ArrayBuffer[]) => void,
  failed: (message: M, err: Error) => void,
): (message: M, transfer?: ArrayBuffer[]) => void {
  const turns = new Batcher<Pending<M>, void>({
    name: 'the posts to another thread',
    start: 'immediate',
    retryAlone: true,
    write: async (batch) => {
      const turn = batch.take();
      post(
        { t: 'batch', messages: turn.map((p) => p.message) },
        turn.flatMap((p) => p.moves ?? []),
      );
      return turn.map(() => undefined);
    },
  });
  return (message, moves) => void turns.add({ message, moves }).catch((err: Error) => failed(message, err));
}
