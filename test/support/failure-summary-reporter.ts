// Prints every failure again, briefly, as the very last lines of a run, on standard output. CI keeps
// the tail of a run's output: the default reporter's failure details come earlier (and go to
// standard error), so without this a red run can end in a summary that names no failed test.
import type { Reporter, SerializedError, TestModule } from "vitest/node";

const MESSAGE_CHARS = 600;

const brief = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, MESSAGE_CHARS);

export default class FailureSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const lines: string[] = [];
    for (const module of testModules) {
      const errors = module.errors();
      for (const e of errors) lines.push(`FAILED ${module.moduleId}: ${brief(e.message ?? String(e))}`);
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state !== "failed") continue;
        const first = result.errors?.[0];
        lines.push(`FAILED ${module.relativeModuleId} > ${test.fullName}: ${brief(first?.message ?? "(no message)")}`);
      }
    }
    for (const e of unhandledErrors) lines.push(`UNHANDLED ERROR: ${brief(e.message ?? String(e))}`);
    if (lines.length === 0) return;
    process.stdout.write(`\nFailures (${lines.length}), again:\n${lines.join("\n")}\n`);
  }
}
