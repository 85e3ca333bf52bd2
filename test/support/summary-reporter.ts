import type { Reporter, SerializedError, TestModule, TestRunEndReason } from 'vitest/node';

/**
 * Ends the run with one plain line, `N passed, N failed, N skipped`, that any CI log reader understands
 * without knowing vitest's own summary format. A test file that fails outside its tests (it does not load, or
 * a hook throws) and an unhandled error each count as one failure, so a failed run never reads `0 failed`.
 */
export default class SummaryLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError> = [], reason?: TestRunEndReason): void {
    let passed = 0;
    let failedTests = 0;
    let skipped = 0;
    let failedFiles = 0;
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failedHere++;
        else skipped++;
      }
      failedTests += failedHere;
      if (failedHere === 0 && module.state() === 'failed') failedFiles++;
    }
    const causes: string[] = [];
    if (failedFiles > 0) causes.push(`${failedFiles} test ${failedFiles === 1 ? 'file' : 'files'} failed outside its tests`);
    if (unhandledErrors.length > 0) causes.push(`${unhandledErrors.length} unhandled ${unhandledErrors.length === 1 ? 'error' : 'errors'}`);
    let failed = failedTests + failedFiles + unhandledErrors.length;
    if (reason === 'failed' && failed === 0) {
      failed = 1;
      causes.push('the run failed outside any test');
    }
    const why = causes.length > 0 ? ` (${causes.join('; ')})` : '';
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped${why}\n`);
  }
}
