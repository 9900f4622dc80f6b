// Loaded into a `mailsvc serve` child with `--import` when MAILSVC_BENCH_HEAP=DIR is set
// (bench/lib/mailsvc.ts): V8's sampling heap profiler on the event loop's isolate, keeping the
// samples of objects the garbage collector has freed, so the profile counts every byte allocated
// over the process's life (not only what is still alive at its end). It is written to
// DIR/heap-PID.heapprofile on exit; `bench/lib/heap-top.ts` reads it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

const dir = process.env.MAILSVC_BENCH_HEAP;
// Worker threads inherit the option, but a terminated worker runs no exit handler.
if (dir && isMainThread) {
  mkdirSync(dir, { recursive: true });
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.enable');
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 32 * 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  process.on('exit', () => {
    // An in-process inspector session answers synchronously, so this runs before the exit.
    session.post('HeapProfiler.stopSampling', (err, result) => {
      if (err) process.stderr.write(`heap sampling: ${err.message}\n`);
      else writeFileSync(join(dir, `heap-${process.pid}.heapprofile`), JSON.stringify(result.profile));
    });
  });
}
