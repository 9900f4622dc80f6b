// Bootstrap of a worker thread whose module is TypeScript (running from source under tsx).
// Node 20 does not hand the parent's module loader to worker threads, and `--import tsx` in a
// worker's execArgv is not honoured, so the worker registers tsx itself before importing.
// Compiled builds (plain .js) start their worker modules directly and never load this file.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
