import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The browser code, built ahead of time by bin/build.mjs into dist/public/ (from src/ or dist/ alike). */
const PUBLIC = fileURLToPath(new URL('../../dist/public/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The files the console serves: nothing else under dist/public/ is reachable. */
export const ASSET_FILES = ['index.html', 'console.js', 'console.css'] as const;
export type AssetName = (typeof ASSET_FILES)[number];

export interface Asset {
  body: Buffer;
  type: string;
}

/** Reads each asset once, on first use; null when the console was not built. */
export class ConsoleAssets {
  private readonly cache = new Map<AssetName, Promise<Asset | null>>();

  constructor(private readonly dir = PUBLIC) {}

  get(name: AssetName): Promise<Asset | null> {
    let entry = this.cache.get(name);
    if (!entry) {
      entry = readFile(this.dir + name).then(
        (body) => ({ body, type: TYPES[extname(name)] ?? 'application/octet-stream' }),
        () => {
          this.cache.delete(name);
          return null;
        },
      );
      this.cache.set(name, entry);
    }
    return entry;
  }
}
