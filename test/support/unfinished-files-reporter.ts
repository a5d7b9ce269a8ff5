import type { Reporter, TestModule } from "vitest/node";

/**
 * Names the test files a run started but never finished. When a test process dies (vitest's
 * "Worker exited unexpectedly"), the summary only says one file fewer passed; this prints which
 * file it was, its project, the tests that had finished in it, and when it started, as the last
 * lines of the run — where a CI log that keeps only its tail still shows them.
 */
export default class UnfinishedFilesReporter implements Reporter {
  private readonly started = new Map<string, { module: TestModule; at: number }>();

  onTestModuleQueued(module: TestModule): void {
    this.started.set(module.id, { module, at: Date.now() });
  }

  onTestModuleEnd(module: TestModule): void {
    this.started.delete(module.id);
  }

  onTestRunEnd(): void {
    const left = [...this.started.values()];
    if (left.length === 0) return;
    const lines = left.map(({ module, at }) => {
      const done = [...module.children.allTests()].filter((t) => t.result().state !== "pending");
      const names = done.map((t) => t.name).join(" | ");
      return `  ${module.project.name}: ${module.moduleId} (queued ${new Date(at).toISOString()}; state ${module.state()}; ${done.length} test(s) finished${names ? `: ${names}` : ""})`;
    });
    process.stdout.write(`\nTest files that did not finish:\n${lines.join("\n")}\n`);
  }
}
