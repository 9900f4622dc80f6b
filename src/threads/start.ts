import { existsSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { buildIsCurrent, ROOT } from '../../bin/build-state.mjs';

let buildCurrent: boolean | undefined;

/**
 * Starts the worker module `name` that sits beside `base` (the caller's `import.meta.url`): the
 * one place that knows how a worker thread gets to run our TypeScript. Compiled, it is the `.js`
 * beside the caller. From source (tsx, vitest) it is the compiled copy in `dist/` while that is
 * current, because compiling the module and its imports again in every new thread costs a
 * quarter of a second of CPU; otherwise `ts-worker.mjs` registers tsx in the thread first.
 */
export function startWorker(base: string, name: string, options: WorkerOptions = {}): Worker {
  const own = fileURLToPath(base);
  const extension = extname(own);
  const entry = new URL(`./${name}${extension}`, base);
  if (extension !== '.ts') return new Worker(entry, options);
  buildCurrent ??= buildIsCurrent();
  const compiled = join(ROOT, 'dist', relative(join(ROOT, 'src'), fileURLToPath(entry))).replace(/\.ts$/, '.js');
  if (buildCurrent && existsSync(compiled)) return new Worker(pathToFileURL(compiled), options);
  return new Worker(new URL('./ts-worker.mjs', import.meta.url), {
    ...options,
    workerData: { ...(options.workerData as object | undefined), entry: entry.href },
  });
}
