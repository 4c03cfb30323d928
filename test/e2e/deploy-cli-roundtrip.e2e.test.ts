import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeBinary, ROOT } from "../../scripts/e2e-server.mjs";
import { type StartedScript, startScript } from "./helpers/start-script";

const run = promisify(execFile);
const SCRIPT = join(ROOT, "test", "e2e", "helpers", "deploy-cli-roundtrip.mjs");
const DNS = join(ROOT, "test", "e2e", "helpers", "localhost-dns.mjs");

/**
 * Issue 28 proof: the unmodified auth0-deploy-cli (8.44.0) against `npm start -- --https`, in a child process
 * (the CLI builds its own SDK client; NODE_EXTRA_CA_CERTS is read at start). A seeded tenant (roles, APIs,
 * applications, a grant, a database connection enabled for two applications, an organization with an enabled
 * connection, a member and a client grant, an action bound to post-login, an email template) is exported with
 * the CLI's defaults: no exclusions.
 */
describe("auth0-deploy-cli against Gatehouse", () => {
  let started: StartedScript;
  let env: Record<string, string>;

  beforeAll(async () => {
    started = await startScript(["--https"]);
    const ca = started.lineAfter("Node clients (the auth0 SDK, openid-client) trust it with:").replace(/^export NODE_EXTRA_CA_CERTS=/, "");
    env = {
      PATH: process.env.PATH ?? "",
      NODE_EXTRA_CA_CERTS: ca,
      GATEHOUSE_PORT: String(started.port),
      GATEHOUSE_CLIENT_SECRET: started.field("Control-plane client_secret:"),
      RUN_ID: crypto.randomUUID().slice(0, 8),
      WORK_DIR: mkdtempSync(join(tmpdir(), "gatehouse-deploy-cli-")),
    };
  }, 120_000);

  afterAll(async () => {
    await started?.stop();
  });

  it("a default export completes and keeps what the tenant holds", async () => {
    const { stdout } = await run(nodeBinary(), ["--import", DNS, SCRIPT], { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024, timeout: 600_000 });
    const { first } = JSON.parse(stdout.trim().split("\n").pop() as string) as { first: string };
    // The organization keeps its connection and client grant (the connection was dropped while
    // /organizations/{id}/connections paged under the wrong key).
    expect(first).toMatch(/organizations:\n {2}- name: acme\n {4}client_grants:\n {6}- client_id: Worker\n {4}connections:\n {6}- name: customers\n/);
    // The database connection keeps the two applications it is enabled for.
    expect(first).toMatch(/- name: customers\n {4}strategy: auth0\n {4}enabled_clients:\n {6}- SPA\n {6}- Web App\n/);
    expect(first).toContain("name: Order reader");
    expect(first).toContain("identifier: https://orders.example.com");
    expect(first).toMatch(/triggers:\n {2}post-login:\n {4}- action_name: add-claim/);
    expect(first).toMatch(/emailTemplates:\n {2}- template: verify_email/);
    expect(first).toMatch(/guardianFactorTemplates:/);
    expect(first).toMatch(/supplementalSignals:\n {2}akamai_enabled: false/);
  }, 900_000);

  // Not done: importing that export into a fresh tenant stops at the CLI's first read of the new tenant
  // (hooks) with "other side closed" from the local https proxy; the import and the equality of the two
  // exports are issue 28's remaining proof.
  it.todo("imports the export into a fresh tenant, and that tenant's export equals the first (ids and secrets aside)");
});
