import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

/**
 * The outbox crash test (issue 8, logins and code redemptions since issue 31), short form, as part of
 * `npm test`: scripts/crash-test.mjs kills its own `wrangler dev` (own state folder, own ports) with SIGKILL
 * half-way through 200 writes, restarts it and checks that no committed write, log row, webhook delivery or
 * single-use redemption was lost or accepted twice; it exits non-zero otherwise. It mostly waits (the relay's
 * claim lease after the restart), so it runs here beside the other e2e files instead of after them.
 */
describe("outbox crash test", () => {
  it("kill -9 in the middle of 200 writes loses nothing and accepts no replayed code", async () => {
    const child = spawn(process.execPath, [join(ROOT, "scripts", "crash-test.mjs"), "--writes", "200"], {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    // The script prints its counts; they stay in the report of a passing run too.
    console.log(output.split("\n").slice(-15).join("\n"));
    expect(code, output.slice(-6_000)).toBe(0);
  }, 480_000);
});
