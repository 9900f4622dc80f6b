import type { Reporter, SerializedError, TestModule } from 'vitest/node';

/**
 * Ends the run with one plain line, `N passed, N failed, N skipped`, that CI and people can
 * read without parsing vitest's own layout. A file that fails to load counts as a failure.
 * Below it, one line per test skipped with a reason (`ctx.skip(condition, reason)`) and per check
 * a passing test left out (an annotation of type `skipped`), so a missing tool never passes
 * silently: vitest's default reporter shows neither outside its verbose mode.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    const said: string[] = [];
    for (const module of modules) {
      failed += module.errors().length;
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state === 'passed') passed += 1;
        else if (result.state === 'failed') failed += 1;
        else skipped += 1;
        const where = `${module.relativeModuleId} > ${test.fullName}`;
        if (result.state === 'skipped' && result.note) said.push(`skipped: ${where}: ${result.note}`);
        for (const a of test.annotations()) if (a.type === 'skipped') said.push(`partly skipped: ${where}: ${a.message}`);
      }
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n${said.map((line) => `${line}\n`).join('')}`);
  }
}
