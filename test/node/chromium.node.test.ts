import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { chromium } from "playwright-core";
import { describe, expect, it } from "vitest";
import { findChromium, NO_CHROMIUM } from "../../scripts/chromium.mjs";
import { nodeBinary, ROOT } from "../../scripts/e2e-server.mjs";
import { CHROMIUM_ARGS } from "../e2e/helpers/browser";

/**
 * `npm test` on a fresh machine (issue 27): the browser tests find a Chromium by themselves, and when none can
 * be had the run stops at once with one line saying what to do. Regression: without /usr/bin/chromium the
 * end-to-end run used to fail each browser file with "Failed to launch chromium because executable doesn't
 * exist" and a stack trace, after the 8-minute integration suite.
 */
const NOWHERE = "/nonexistent/chromium";
// Node and npm's binaries only: no directory that holds a browser.
const BARE_PATH = [dirname(nodeBinary()), join(ROOT, "node_modules", ".bin")].join(":");

function runBare(command: string, args: string[]) {
  const started = Date.now();
  const { CHROME_PATH: _c, GATEHOUSE_E2E_CHROMIUM: _g, ...env } = process.env;
  const result = spawnSync(command, args, {
    cwd: ROOT,
    env: { ...env, PATH: BARE_PATH, GATEHOUSE_E2E_CHROMIUM: NOWHERE, NO_COLOR: "1", FORCE_COLOR: "0" },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { ...result, ms: Date.now() - started };
}

const nonEmptyLines = (text: string) => text.split("\n").filter((line) => line.trim() !== "");

describe("finding Chromium for the browser tests", () => {
  it("stops the end-to-end run before any test, with one line, when the configured browser does not exist", () => {
    const run = runBare(nodeBinary(), [join(ROOT, "node_modules", "vitest", "vitest.mjs"), "run", "--config", "vitest.e2e.config.ts", "test/e2e/spa.e2e.test.ts"]);
    expect(run.status).toBe(1);
    expect(nonEmptyLines(run.stderr)).toEqual([`GATEHOUSE_E2E_CHROMIUM=${NOWHERE} is not an executable file: point it at a Chrome/Chromium binary or unset it.`]);
    expect(run.stdout).not.toMatch(/skipped|✓|×|Failed to launch/);
    expect(run.ms).toBeLessThan(30_000);
  });

  it("fails npm's pretest step the same way, before the integration suite", () => {
    const run = runBare(nodeBinary(), [join(ROOT, "scripts", "chromium.mjs")]);
    expect(run.status).toBe(1);
    expect(nonEmptyLines(run.stderr)).toHaveLength(1);
    expect(run.stderr).toContain(NOWHERE);
  });

  it("says what to do when there is no browser anywhere", async () => {
    expect(await findChromium({ env: { PATH: BARE_PATH }, system: [], bundled: false })).toEqual({ error: NO_CHROMIUM });
    expect(NO_CHROMIUM).toMatch(/apt-get install chromium/);
    expect(NO_CHROMIUM).toMatch(/CHROME_PATH/);
  });

  it("prefers CHROME_PATH when it names an executable", async () => {
    expect(await findChromium({ env: { CHROME_PATH: nodeBinary(), PATH: "" }, system: [], bundled: false })).toEqual({ path: nodeBinary(), source: "CHROME_PATH" });
  });

  it("falls back to the Chromium shipped in the npm tarball, which launches headless here", async () => {
    const found = await findChromium({ env: { PATH: BARE_PATH }, system: [] });
    expect(found).toMatchObject({ source: "@sparticuz/chromium (npm)" });
    if (!("path" in found)) throw new Error(found.error);
    const browser = await chromium.launch({ executablePath: found.path, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 });
    try {
      const page = await browser.newPage();
      await page.setContent(`<button onclick="this.textContent='clicked'">press</button>`);
      await page.click("button");
      expect(await page.textContent("button")).toBe("clicked");
    } finally {
      await browser.close();
    }
  });
});
