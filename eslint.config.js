// ESLint with typescript-eslint's type-aware rules: they see what a promise is, so an unawaited
// one (no-floating-promises) or one handed to a callback that ignores what it returns
// (no-misused-promises) is an error. Layout is Prettier's job (`npm run format`), not a rule's.
// docs/DECISIONS.md says why each rule turned off below is off.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', '.dist-*/', 'node_modules/', 'coverage/', 'test-output/', 'data/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        // Each file is checked with the nearest tsconfig: the root one, or console/'s (DOM, bundler).
        // The plain JavaScript files outside both get a default program.
        projectService: { allowDefaultProject: ['bin/*.mjs', 'src/threads/*.mjs', 'bench/lib/*.mjs', 'eslint.config.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Values typed `any` arrive at known edges (knex rows and raw results, JSON bodies in
      // tests) and are given their type by the assignment; tsc's strict mode checks the rest.
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // `rows[0]!` is the house style for an index tsc does not check (no noUncheckedIndexedAccess).
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // Interfaces declare members in method syntax and closures implement them: passing one
      // (`rateLimit: services.rateLimit`) is safe, and the rule cannot tell.
      '@typescript-eslint/unbound-method': 'off',
      // An `async` function without `await` still returns a promise, as its interface asks.
      '@typescript-eslint/require-await': 'off',
      // Like tsc's noUnusedLocals: a leading underscore names what is left out on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // knex's query builders are thenables, so a callback that builds a condition
    // (`.where((q) => q.whereNull(...))`) looks like one returning a promise where void is expected.
    files: ['src/store/**/*.ts'],
    rules: { '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }] },
  },
  {
    // The console's DOM listeners are async and each catches its own errors; the browser only
    // logs a rejection that escapes one. Promises handed to anything else are still checked.
    files: ['console/**/*.ts'],
    languageOptions: { globals: globals.browser },
    rules: { '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }] },
  },
  {
    // Tests read JSON answers, typed `any` on purpose.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
