import { defineConfig } from "vitest/config";
import LongestFirst from "./test/e2e/sequencer.mjs";

/**
 * End-to-end suite, plus Node-side checks: plain Node (not the workers pool). Each file starts a real `wrangler dev`
 * (scripts/e2e-server.mjs) and drives it with third-party clients over HTTP.
 */
export default defineConfig({
  test: {
    environment: "node",
    // Node-side tests (test/node) run here too: they check our XML signatures with an independent verifier.
    include: ["test/e2e/**/*.e2e.test.ts", "test/node/**/*.node.test.ts"],
    pool: "forks",
    // Two files at a time: a file mostly waits (on its wrangler dev, on Chromium, on the network), and one at a time
    // left half of the 2 cores idle (CI's 17 min run used 45 % of them). Each file still owns its server (or the
    // shared one, which its own tenants keep apart); ports are the OS's free ones.
    fileParallelism: true,
    maxWorkers: 2,
    // The longest files first (test/e2e/sequencer.mjs), so the two workers end together.
    sequence: { sequencer: LongestFirst },
    hookTimeout: 120_000,
    testTimeout: 60_000,
    teardownTimeout: 30_000,
    // Find the browser first (scripts/chromium.mjs): without one the run stops at once with one line.
    globalSetup: ["./test/e2e/global-setup.mjs"],
    reporters: ["default", "./test/reporters/slowest-files.mjs"],
  },
});
