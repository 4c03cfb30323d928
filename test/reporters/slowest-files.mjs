import { relative } from "node:path";

/**
 * A vitest reporter (used beside "default") that prints the slowest test files when a run ends, so that CI's
 * growth towards its time budget shows in every log (issue 27). A file's time is what it cost the run:
 * environment setup, harness preparation, import and collection, plus its tests and hooks.
 */
export default class SlowestFiles {
  /** @param {{count?: number}} [options] how many files to list. @default 10 */
  constructor({ count = 10 } = {}) {
    this.count = count;
  }

  onInit(vitest) {
    this.vitest = vitest;
  }

  onTestRunEnd(testModules) {
    const cost = (m) => {
      const d = m.diagnostic();
      return d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
    };
    const rows = testModules
      .map((m) => ({ file: relative(this.vitest.config.root, m.moduleId), ms: cost(m), state: m.state() }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, this.count);
    if (rows.length === 0) return;
    const total = testModules.reduce((sum, m) => sum + cost(m), 0);
    const lines = rows.map((r) => `  ${(r.ms / 1000).toFixed(1).padStart(7)} s  ${r.file}${r.state === "passed" ? "" : ` (${r.state})`}`);
    this.vitest.logger.log(
      [`\nSlowest ${rows.length} of ${testModules.length} test files (${(total / 1000).toFixed(0)} s summed over files):`, ...lines, ""].join("\n"),
    );
  }
}
