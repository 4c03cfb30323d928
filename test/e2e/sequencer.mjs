import { relative } from "node:path";
import { BaseSequencer } from "vitest/node";

/**
 * The e2e files' seconds in a clean-clone CI run (the `✓ file (N tests) Xms` lines of `bash .ci/run`, rounded),
 * used to start the longest files first: with two files at a time, the run ends when the busier worker does,
 * and a long file started last (vitest's default order in a clean clone, where it has no cache of results, is
 * by file size) leaves the other worker idle meanwhile. A file missing here counts as 20 s. Refresh the table
 * when a file's time changes a lot; the order only changes the wall time, never what runs.
 */
export const SECONDS = {
  "test/e2e/admin-console.e2e.test.ts": 150,
  "test/e2e/crash.e2e.test.ts": 50,
  "test/e2e/deploy-cli-roundtrip.e2e.test.ts": 92,
  "test/e2e/accessibility.e2e.test.ts": 110,
  "test/e2e/deployments.e2e.test.ts": 67,
  "test/e2e/deployments-fault.e2e.test.ts": 63,
  "test/e2e/mfa.e2e.test.ts": 52,
  "test/e2e/readme-tour.e2e.test.ts": 37,
  "test/e2e/organizations.e2e.test.ts": 22,
  "test/e2e/enterprise-login.e2e.test.ts": 22,
  "test/e2e/login-languages.e2e.test.ts": 20,
  "test/e2e/start.e2e.test.ts": 21,
  "test/e2e/sdk-walk.e2e.test.ts": 18,
  "test/e2e/branding.e2e.test.ts": 18,
  "test/e2e/https.e2e.test.ts": 17,
  "test/e2e/login.e2e.test.ts": 17,
  "test/e2e/consent.e2e.test.ts": 16,
  "test/e2e/jobs.e2e.test.ts": 15,
  "test/e2e/actions.e2e.test.ts": 15,
  "test/e2e/custom-database.e2e.test.ts": 15,
  "test/e2e/actions-redirect.e2e.test.ts": 15,
  "test/e2e/foundation.e2e.test.ts": 13,
  "test/e2e/tenant-organizations.e2e.test.ts": 7,
  "test/e2e/password-reset.e2e.test.ts": 13,
  "test/e2e/jar-dpop.e2e.test.ts": 11,
  "test/e2e/rate-limits.e2e.test.ts": 12,
  "test/e2e/device-par.e2e.test.ts": 10,
  "test/e2e/outbox.e2e.test.ts": 5,
  "test/e2e/passwordless.e2e.test.ts": 9,
  "test/e2e/email-templates.e2e.test.ts": 6,
  "test/e2e/signing-keys.e2e.test.ts": 6,
  "test/e2e/backchannel-logout.e2e.test.ts": 6,
  "test/e2e/current-user.e2e.test.ts": 3,
  "test/e2e/saml.e2e.test.ts": 8,
  "test/e2e/users.e2e.test.ts": 7,
  "test/e2e/spa.e2e.test.ts": 7,
  "test/e2e/custom-domains.e2e.test.ts": 6,
  "test/node/chromium.node.test.ts": 4,
  "test/node/xmldsig.node.test.ts": 2,
  "test/e2e/roles.e2e.test.ts": 2,
  "test/e2e/refresh.e2e.test.ts": 2,
  "test/e2e/unoffered-export.e2e.test.ts": 1,
  "test/e2e/authentication-methods.e2e.test.ts": 1,
};

/** Seconds a file missing from the table is taken to last. @default 20 */
const UNKNOWN_SECONDS = 20;

/** Longest first (by the table), ties by path so the order is the same on every machine. */
export default class LongestFirst extends BaseSequencer {
  async sort(files) {
    const root = this.ctx.config.root;
    const seconds = (spec) => SECONDS[relative(root, spec.moduleId).split("\\").join("/")] ?? UNKNOWN_SECONDS;
    return [...files].sort((a, b) => seconds(b) - seconds(a) || (a.moduleId < b.moduleId ? -1 : a.moduleId > b.moduleId ? 1 : 0));
  }
}
