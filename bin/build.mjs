#!/usr/bin/env node
// Compiles src/ to dist/ ahead of time so the CLI starts without compiling TypeScript.
// The web console (console/) is bundled into dist/public/. One output file per source file: relative `.ts` specifiers become `.js`, packages stay
// external, except two that every command loads and that Node would otherwise read as hundreds
// of small files (knex with lodash's one-function-per-file modules, TypeBox's ESM build): each
// is bundled once into dist/vendor/, and the imports of src/ point there.
// Type checking is `npm run typecheck`'s job, not this one's.
// dist/.built is written last, stamped with the time the build started: bin/mailsvc runs dist/
// only while no file under src/ is newer than that stamp (bin/build-state.mjs).
// The build is written to a fresh folder and swapped in, so a CLI starting meanwhile sees either
// the old build or the new one. `--if-stale` builds only when dist/ is not current.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { buildIsCurrent, ROOT as root } from './build-state.mjs';

if (process.argv.includes('--if-stale') && buildIsCurrent(root)) process.exit(0);

const src = join(root, 'src');
const dist = join(root, 'dist');
// Imports are rewritten relative to dist/, whichever folder the build is written to first.
const out = join(root, `.dist-${process.pid}`);
const started = new Date();

/** dist/vendor/<file>.mjs and what it exports; each specifier of src/ listed maps to one file. */
const VENDOR_BUNDLES = {
  knex: "export { default } from 'knex';",
  // One bundle for both entry points, so Value works on the schemas Type builds with one set of registries.
  typebox: "export * from '@sinclair/typebox'; export { Value } from '@sinclair/typebox/value';",
};
const VENDORED = { knex: 'knex', '@sinclair/typebox': 'typebox', '@sinclair/typebox/value': 'typebox' };
/** Never bundled: native code, or a module whose one shared instance we configure (pg's type parsers). */
const KEEP_EXTERNAL = new Set(['better-sqlite3', 'pg', 'pg-native', 'pg-query-stream', 'sqlite3', 'mysql', 'mysql2', 'mariadb', 'oracledb', 'tedious']);

const packageName = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/** Inlines what resolves, except KEEP_EXTERNAL; a driver that is not installed stays a runtime require. */
const vendorExternals = {
  name: 'vendor-externals',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData === 'inner' || args.path.startsWith('node:')) return undefined;
      if (KEEP_EXTERNAL.has(packageName(args.path))) return { path: args.path, external: true };
      const resolved = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: 'inner' });
      return resolved.errors.length > 0 ? { path: args.path, external: true } : resolved;
    });
  },
};

const sourceImports = {
  name: 'source-imports',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      if (/^\.\.?\//.test(args.path)) return { path: args.path.replace(/\.ts$/, '.js'), external: true };
      const vendored = VENDORED[args.path];
      if (vendored) {
        const output = join(dist, relative(src, dirname(args.importer)));
        const target = relative(output, join(dist, 'vendor', `${vendored}.mjs`));
        return { path: target.startsWith('.') ? target : `./${target}`, external: true };
      }
      return { path: args.path, external: true };
    });
  },
};

rmSync(out, { recursive: true, force: true });
try {
  const common = { bundle: true, platform: 'node', target: 'node20', sourcemap: true, logLevel: 'warning' };
  for (const [file, contents] of Object.entries(VENDOR_BUNDLES)) {
    await build({
      ...common,
      stdin: { contents, resolveDir: root, sourcefile: `vendor-${file}.mjs` },
      outfile: join(out, 'vendor', `${file}.mjs`),
      // ESM, so that importing it skips the scan Node runs over CommonJS for named exports.
      format: 'esm',
      banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
      plugins: [vendorExternals],
    });
  }
  await build({
    ...common,
    entryPoints: readdirSync(src, { recursive: true })
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
      .map((f) => join(src, f)),
    outdir: out,
    outbase: src,
    format: 'esm',
    plugins: [sourceImports],
  });
  // The web console's browser code: one bundle for the page, with its HTML and stylesheet.
  await build({
    entryPoints: [join(root, 'console', 'main.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: true,
    logLevel: 'warning',
    outfile: join(out, 'public', 'console.js'),
  });
  mkdirSync(join(out, 'public'), { recursive: true });
  for (const file of ['index.html', 'console.css']) copyFileSync(join(root, 'console', file), join(out, 'public', file));
} catch (err) {
  rmSync(out, { recursive: true, force: true });
  throw err;
}
const stamp = join(out, '.built');
writeFileSync(stamp, `${started.toISOString()}\n`);
utimesSync(stamp, started, started);
const old = `${out}-old`;
try {
  renameSync(dist, old);
} catch (err) {
  if (err.code !== 'ENOENT') throw err;
}
renameSync(out, dist);
rmSync(old, { recursive: true, force: true });
