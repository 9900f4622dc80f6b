import { describe, expect, it } from 'vitest';
import { Batcher, BatcherClosedError, type Batch } from '../../src/core/batcher.ts';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** Settles within a few turns of the event loop, or says it is still pending. */
async function soon<T>(promise: Promise<T>): Promise<PromiseSettledResult<T> | 'pending'> {
  let outcome: PromiseSettledResult<T> | 'pending' = 'pending';
  promise.then(
    (value) => (outcome = { status: 'fulfilled', value }),
    (reason: unknown) => (outcome = { status: 'rejected', reason }),
  );
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  return outcome;
}

const doubled = async (batch: Batch<number, number>) => batch.take().map((n) => n * 2);

describe('Batcher', () => {
  it('writes the items of one turn in one call and answers each with its own result', async () => {
    const calls: number[][] = [];
    const batcher = new Batcher<number, number>({
      name: 'test queue',
      start: 'immediate',
      write: async (batch) => {
        calls.push(batch.take());
        return doubled(batch);
      },
    });
    const results = await Promise.all([1, 2, 3, 4, 5].map((n) => batcher.add(n)));
    expect(results).toEqual([2, 4, 6, 8, 10]);
    expect(calls).toEqual([[1, 2, 3, 4, 5]]);
  });

  it('gives a writer that takes late everything that arrived before it took', async () => {
    const ready = gate();
    const calls: number[][] = [];
    const batcher = new Batcher<number, number>({
      name: 'test queue',
      write: async (batch) => {
        await ready.opened;
        calls.push(batch.take());
        return doubled(batch);
      },
    });
    const first = batcher.add(1);
    const later = [batcher.add(2), batcher.add(3)];
    ready.open();
    expect(await Promise.all([first, ...later])).toEqual([2, 4, 6]);
    expect(calls).toEqual([[1, 2, 3]]);
  });

  it('splits at maxBatch and writes the rest in later batches', async () => {
    const calls: number[][] = [];
    const batcher = new Batcher<number, number>({
      name: 'test queue',
      start: 'immediate',
      maxBatch: 2,
      maxInFlight: 1,
      write: async (batch) => {
        calls.push(batch.take());
        return doubled(batch);
      },
    });
    expect(await Promise.all([1, 2, 3, 4, 5].map((n) => batcher.add(n)))).toEqual([2, 4, 6, 8, 10]);
    expect(calls).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('runs at most maxInFlight batches, and what arrives meanwhile goes together in the next', async () => {
    const release = gate();
    const calls: number[][] = [];
    const batcher = new Batcher<number, number>({
      name: 'test queue',
      maxInFlight: 1,
      write: async (batch) => {
        calls.push(batch.take());
        if (calls.length === 1) await release.opened;
        return doubled(batch);
      },
    });
    const first = batcher.add(1);
    const meanwhile = [batcher.add(2), batcher.add(3)];
    expect(await soon(meanwhile[0])).toBe('pending');
    expect(calls).toEqual([[1]]);
    release.open();
    expect(await Promise.all([first, ...meanwhile])).toEqual([2, 4, 6]);
    expect(calls).toEqual([[1], [2, 3]]);
  });

  it('rejects every item of a batch whose writer failed before taking it, and goes on with the next', async () => {
    // The writer's commit could not even open (as when a transaction cannot start): the items
    // were never taken. They must be answered, and later items must still be written.
    let failures = 1;
    const batcher = new Batcher<number, number>({
      name: 'test queue',
      start: 'immediate',
      write: async (batch) => {
        if (failures-- > 0) throw new Error('could not open a transaction');
        return doubled(batch);
      },
    });
    const failed = Promise.allSettled([batcher.add(1), batcher.add(2)]);
    const refused = { status: 'rejected', reason: new Error('could not open a transaction') };
    expect(await soon(failed)).toEqual({ status: 'fulfilled', value: [refused, refused] });
    expect(await Promise.all([batcher.add(3), batcher.add(4)])).toEqual([6, 8]);
  });

  it('rejects the items of a writer that throws synchronously', async () => {
    const batcher = new Batcher<number, number>({
      name: 'test queue',
      write: (() => {
        throw new Error('not even a promise');
      }) as never,
    });
    expect(await soon(batcher.add(1))).toEqual({ status: 'rejected', reason: new Error('not even a promise') });
    expect(batcher.queued).toBe(0);
  });

  it('with retryAlone, writes each item of a failed batch alone, so one bad item costs only itself', async () => {
    const calls: number[][] = [];
    const batcher = new Batcher<number, number>({
      name: 'test queue',
      start: 'immediate',
      retryAlone: true,
      write: async (batch) => {
        const items = batch.take();
        calls.push(items);
        if (items.includes(13)) throw new Error('13 is refused');
        return items.map((n) => n * 2);
      },
    });
    const results = await Promise.allSettled([12, 13, 14].map((n) => batcher.add(n)));
    expect(results).toEqual([
      { status: 'fulfilled', value: 24 },
      { status: 'rejected', reason: new Error('13 is refused') },
      { status: 'fulfilled', value: 28 },
    ]);
    expect(calls).toEqual([[12, 13, 14], [12], [13], [14]]);
  });

  it('with retryAlone, retries a batch that failed before taking its items, item by item', async () => {
    let failures = 1;
    const batcher = new Batcher<number, number>({
      name: 'test queue',
      start: 'immediate',
      retryAlone: true,
      write: async (batch) => {
        if (failures-- > 0) throw new Error('could not open a transaction');
        return doubled(batch);
      },
    });
    expect(await Promise.all([batcher.add(1), batcher.add(2)])).toEqual([2, 4]);
  });

  it('rejects the items a writer left unanswered, naming the queue', async () => {
    const batcher = new Batcher<number, number>({
      name: 'the test queue',
      start: 'immediate',
      write: async (batch) => batch.take().slice(0, 1),
    });
    const results = await Promise.allSettled([1, 2].map((n) => batcher.add(n)));
    expect(results[0]).toEqual({ status: 'fulfilled', value: 1 });
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { message: 'the test queue ended a batch without an answer for this item' } });
  });

  it('lets a writer answer items one by one as their results come', async () => {
    const second = gate();
    const batcher = new Batcher<number, string>({
      name: 'test queue',
      start: 'microtask',
      write: async (batch) => {
        batch.resolve(0, 'first');
        await second.opened;
        batch.reject(1, new Error('second failed'));
      },
    });
    const a = batcher.add(1);
    const b = batcher.add(2);
    expect(await soon(a)).toEqual({ status: 'fulfilled', value: 'first' });
    expect(await soon(b)).toBe('pending');
    second.open();
    await expect(b).rejects.toThrow('second failed');
  });

  it('on close, writes what is queued, then refuses new items at once', async () => {
    const release = gate();
    const written: number[] = [];
    const batcher = new Batcher<number, number>({
      name: 'the accepting queue',
      maxInFlight: 1,
      write: async (batch) => {
        await release.opened;
        written.push(...batch.take());
        return doubled(batch);
      },
    });
    const pending = [batcher.add(1), batcher.add(2)];
    const closed = batcher.close();
    await expect(batcher.add(3)).rejects.toThrow(new BatcherClosedError('the accepting queue'));
    expect(await soon(closed)).toBe('pending');
    release.open();
    await closed;
    expect(await Promise.all(pending)).toEqual([2, 4]);
    expect(written).toEqual([1, 2]);
  });

  it('on abort, rejects what no batch has taken yet', async () => {
    const release = gate();
    const batcher = new Batcher<number, number>({
      name: 'test queue',
      maxInFlight: 1,
      write: async (batch) => {
        const items = batch.take();
        await release.opened;
        return items.map((n) => n * 2);
      },
    });
    const running = batcher.add(1);
    await new Promise((resolve) => setImmediate(resolve));
    const queued = batcher.add(2);
    batcher.abort(new Error('stopped'));
    await expect(queued).rejects.toThrow('stopped');
    release.open();
    expect(await running).toBe(2);
  });
});
