// Names for the frames of V8's profiles (CPU and heap), shared by their readers.

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

/** The package or source file a frame is in: `knex`, `dist/store/db.js`, `node:net`, `(native)`. */
export const where = (url: string): string => {
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1];
  const src = /\/(src|dist|bench)\/(.*)$/.exec(url);
  if (src) return `${src[1]}/${src[2]}`;
  return url === '' ? '(native)' : url;
};

/** `name file:line`, the line counted from 1. */
export const frameLabel = (f: CallFrame): string => `${f.functionName || '(anonymous)'} ${where(f.url)}:${f.lineNumber + 1}`;
