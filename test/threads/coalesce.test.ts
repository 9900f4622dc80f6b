import { MessageChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { coalescingPoster, type Coalesced } from '../../src/threads/coalesce.ts';

type Message = { n: number; bytes?: Uint8Array; extra?: unknown };

describe('coalescingPoster', () => {
  const channels: MessageChannel[] = [];
  afterEach(() => channels.splice(0).forEach((c) => (c.port1.close(), c.port2.close())));

  function wire() {
    const channel = new MessageChannel();
    channels.push(channel);
    const failures: { message: Message; err: Error }[] = [];
    let posts = 0;
    const post = coalescingPoster<Message>(
      (batch, transfer) => {
        posts++;
        channel.port1.postMessage(batch, transfer);
      },
      (message, err) => failures.push({ message, err }),
    );
    // Every batch is kept as it arrives, so none can be missed between two waits.
    const batches: Coalesced<Message>[] = [];
    let arrived: (() => void) | null = null;
    channel.port2.on('message', (batch: Coalesced<Message>) => (batches.push(batch), arrived?.()));
    let taken = 0;
    const next = async (): Promise<Coalesced<Message>> => {
      while (batches.length <= taken) await new Promise<void>((resolve) => (arrived = resolve));
      return batches[taken++]!;
    };
    return { post, next, failures, posts: () => posts };
  }

  it('sends the messages of one turn as one post, in order, with the buffers they move', async () => {
    const { post, next, posts } = wire();
    const bytes = new Uint8Array([1, 2, 3]);
    post({ n: 1 });
    post({ n: 2, bytes }, [bytes.buffer]);
    post({ n: 3 });
    const batch = await next();
    expect(batch).toEqual({ t: 'batch', messages: [{ n: 1 }, { n: 2, bytes: new Uint8Array([1, 2, 3]) }, { n: 3 }] });
    expect(posts()).toBe(1);
    // Moved, not copied: the sender's view is gone.
    expect(bytes.byteLength).toBe(0);

    post({ n: 4 });
    expect((await next()).messages).toEqual([{ n: 4 }]);
    expect(posts()).toBe(2);
  });

  it('sends the others of the turn when one message cannot cross, and hands that one to failed', async () => {
    const { post, next, failures } = wire();
    const kept = new Uint8Array([7, 8]);
    post({ n: 1 });
    post({ n: 2, extra: () => 'a function cannot be copied' });
    post({ n: 3, bytes: kept }, [kept.buffer]);
    const batches = [await next(), await next()];
    expect(batches.flatMap((b) => b.messages.map((m) => m.n))).toEqual([1, 3]);
    expect(batches[1]!.messages[0]!.bytes).toEqual(new Uint8Array([7, 8]));
    expect(failures.map((f) => f.message.n)).toEqual([2]);
    expect(failures[0]!.err.name).toBe('DataCloneError');
  });
});
