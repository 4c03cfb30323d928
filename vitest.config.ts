import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

/** Test-only secrets: the workers-pool suite runs the real worker and objects in workerd. */
export const TEST_BINDINGS = {
  ENCRYPTION_KEY: "test-only-encryption-key-0123456789abcdef",
  CONTROL_PLANE_CLIENT_SECRET: "test-only-control-plane-secret",
  ADMIN_EMAIL: "admin@example.com",
  ADMIN_PASSWORD: "correct horse battery staple",
  HOST_CACHE_NEGATIVE_TTL_MS: "0",
  // Management auth reads a user token's user at each request (issue 25 finding 5), no isolate cache.
  USER_STANDING_TTL_MS: "0",
  // Actions: a short sandbox timeout keeps the endless-loop tests quick.
  ACTIONS_TIMEOUT_MS: "1500",
  // The archive pipeline's token (its endpoint is set per test: the receiver's port is random).
  OUTBOX_PIPELINE_TOKEN: "pipeline-token",
  // SMS and email go to the tenant's development sink, read back by the MFA and passwordless tests.
  DEV_MESSAGE_SINK: "1",
  // Webhooks, log streams and back-channel logout reach the local receiver on 127.0.0.1 (issue 25 point 8:
  // off in production, where loopback is refused; test/unit/shared/egress-policy.test.ts covers it off).
  ALLOW_LOOPBACK_EGRESS: "1",
  // Management rate limits (issue 28 point 4): low only for tenants whose id starts with "rl-", so every other
  // file keeps the generous defaults (test/integration/management-rate-limits.test.ts).
  MANAGEMENT_RATE_LIMIT_TENANTS: JSON.stringify({ "rl-*": { client: 3, tenant: 5, period: 3 } }),
  // The authentication endpoints' per-tenant limit (issue 31 point 4): low only for tenants named "arl-*"
  // (test/integration/auth-rate-limit.test.ts); every other tenant keeps the generous default.
  AUTH_RATE_LIMIT_TENANTS: JSON.stringify({ "arl-*": { tenant: 4, period: 3 } }),
  // The object meter (issue 31, src/objects/meter.ts) on the tenants of test/integration/object-meter.test.ts only.
  OBJECT_METER: "meter-",
  // Per-tenant deployments: quick step retries (the namespace is an in-process fake, test/helpers/fake-cloudflare.ts).
  DEPLOY_STEP_RETRIES: "2",
  DEPLOY_STEP_RETRY_DELAY_MS: "50",
};

/**
 * Files that assume a world of their own: they count or walk every tenant, or sync the control plane into
 * every child, so they run with a fresh runtime and storage each (vitest's default isolation).
 */
const OWN_WORLD = ["test/integration/platform.test.ts", "test/integration/tenants.test.ts", "test/integration/inheritance-sync.test.ts"];

export default defineConfig({
  plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" }, miniflare: { bindings: TEST_BINDINGS } })],
  test: {
    testTimeout: 30_000,
    // One file per core, not vitest's default of cores - 1: loading a file's modules into workerd waits on
    // round trips more than it computes, so a 2-core machine (where the default is one worker) runs the
    // suite about a third faster with two (198 s against 124 s for 16 files, measured at stop 21).
    maxWorkers: "100%",
    // A local webhook receiver (test/receiver): hooks POST to it over real HTTP from the tenant object.
    globalSetup: ["./test/receiver/global-setup.mjs"],
    // The slowest files after the usual summary: CI's time budget is a test property too (issue 27).
    reporters: ["default", "./test/reporters/slowest-files.mjs"],
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/unit/**/*.test.ts", "test/integration/**/*.test.ts"],
          exclude: OWN_WORLD,
          // Files share one runtime per worker (its modules loaded once, its storage kept between files):
          // loading the worker's module graph into a fresh workerd cost about 6 s per file, 812 s of the
          // suite's 1,260 file-seconds (issue 27 point 5). Every test makes its own tenant (uniqueId), so
          // what another file left behind is never read.
          isolate: false,
        },
      },
      { extends: true, test: { name: "own-world", include: OWN_WORLD, isolate: true } },
    ],
  },
});
