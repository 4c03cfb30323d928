import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeBinary, ROOT } from "../../scripts/e2e-server.mjs";
import { THEME } from "../helpers/theme";
import { type StartedScript, startScript } from "./helpers/start-script";

const run = promisify(execFile);
const SCRIPT = join(ROOT, "test", "e2e", "helpers", "deploy-cli-roundtrip.mjs");
const DNS = join(ROOT, "test", "e2e", "helpers", "localhost-dns.mjs");

/**
 * Issue 28 proof: the unmodified auth0-deploy-cli (8.44.0) against `npm start -- --https`, in a child process
 * (the CLI builds its own SDK client; NODE_EXTRA_CA_CERTS is read at start). A seeded tenant (roles, APIs,
 * applications, a grant, a database connection enabled for two applications, an organization with an enabled
 * connection, a member and a client grant, an action bound to post-login, an email template, custom prompt text
 * and a theme) is exported with the CLI's defaults (no exclusions), imported into a fresh tenant with the CLI's
 * `deploy`, and that tenant exported again.
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
      THEME: JSON.stringify(THEME),
    };
  }, 120_000);

  afterAll(async () => {
    await started?.stop();
  });

  let first: string;
  let second: string;

  it("a default export completes and keeps what the tenant holds", async () => {
    const { stdout } = await run(nodeBinary(), ["--import", DNS, SCRIPT], { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024, timeout: 600_000 });
    ({ first, second } = JSON.parse(stdout.trim().split("\n").pop() as string) as { first: string; second: string });
    // The organization keeps its connection and client grant (the connection was dropped while
    // /organizations/{id}/connections paged under the wrong key).
    expect(first).toMatch(/organizations:\n {2}- name: acme\n {4}client_grants:\n {6}- client_id: Worker\n {4}connections:\n {6}- name: customers\n/);
    // The database connection keeps the two applications it is enabled for.
    expect(first).toMatch(/- name: customers\n {4}strategy: auth0\n {4}enabled_clients:\n {6}- SPA\n {6}- Web App\n/);
    expect(first).toContain("name: Order reader");
    expect(first).toContain("identifier: https://orders.example.com");
    expect(first).toMatch(/triggers:\n {2}post-login:\n {4}- action_name: add-claim/);
    expect(first).toMatch(/emailTemplates:\n {2}- template: verify_email/);
    expect(first).toMatch(/customText:\n {4}en:\n {6}login:\n {8}login:\n {10}title: Welcome to Acme/);
    expect(first).toMatch(/themes:\n {2}- borders:/);
    expect(first).toMatch(/guardianFactorTemplates:/);
    expect(first).toMatch(/supplementalSignals:\n {2}akamai_enabled: false/);
  }, 900_000);

  it("imports the export into a fresh tenant, and that tenant's export equals the first (ids and secrets aside)", () => {
    // The export names clients, connections and APIs by name, never by id, and holds no secrets; what differs
    // between two tenants is only when things were made.
    const timesAside = (text: string) => text.replace(/^ *(created_at|updated_at): .*\n/gm, "");
    // The CLI's import fills its schema's default into each database connection it sends
    // (disable_self_service_change_password: false, ajv useDefaults), so the copy stores what it was sent.
    const cliDefaultsAside = (text: string) => text.replace(/^ *disable_self_service_change_password: false\n/gm, "").replace(/options: \{\}\n/g, "options:\n");
    // A connection the import creates is enabled for exactly the applications the export names (the CLI creates
    // it, then enables it with PATCH /connections/{id}/clients), as on the reference platform.
    expect(second).toMatch(/- name: customers\n {4}strategy: auth0\n {4}enabled_clients:\n {6}- SPA\n {6}- Web App\n/);
    expect(cliDefaultsAside(timesAside(second))).toBe(cliDefaultsAside(timesAside(first)));
  });
});
