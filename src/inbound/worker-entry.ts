import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';

// '.ts' when running from source (tsx, vitest), '.js' once compiled: worker modules sit beside
// this file with the same extension.
const OWN_EXTENSION = extname(fileURLToPath(import.meta.url));

/**
 * Starts the worker module `name` of this folder (e.g. 'parse-worker'), from source or compiled.
 * The one place that knows how a worker thread gets to run TypeScript.
 */
export function startWorker(name: string, resourceLimits: ResourceLimits): Worker {
  const entry = new URL(`./${name}${OWN_EXTENSION}`, import.meta.url);
  if (OWN_EXTENSION !== '.ts') return new Worker(entry, { resourceLimits });
  return new Worker(new URL('./ts-worker.mjs', import.meta.url), { workerData: { entry: entry.href }, resourceLimits });
}
