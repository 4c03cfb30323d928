import type { ManagementClient } from "auth0";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { type RunningServer, startServer } from "../../../scripts/e2e-server.mjs";
import { type CallbackServer, type ContextLog, launchChromium, newRecordedContext, startCallbackServer } from "./browser";
import { tenantAdmin, tenantServer } from "./tenant-server";

/**
 * The set-up of a browser suite in a child tenant of its own on the e2e suite's shared server (development
 * sink on; `GATEHOUSE_E2E_SHARE=0`: a server of its own): the `auth0` SDK as the tenant's administrator (a
 * machine-to-machine application of the tenant granted its management API), a regular web application whose
 * callback is a loopback server, headless Chromium on the tenant's host (`http://{tenant}.localhost:PORT`), and
 * on a failed test the report of wrangler's output and of what each browser context requested. Suites change
 * their tenant's MFA policy, theme, prompt texts and connections: no other file reads them. Called inside a
 * `describe`: it registers the hooks; the fields are set once `beforeAll` ran.
 */
export interface BrowserSuite {
  /** The suite's tenant as a server: its host, its issuer, its administrator's credentials (clientId/clientSecret). */
  server: RunningServer;
  admin: ManagementClient;
  browser: Browser;
  callbacks: CallbackServer;
  /** The web application (authorization code, client_secret_post). */
  app: { client_id: string; client_secret: string };
  /** The application's callback on the loopback server. */
  redirectUri: string;
  /** A fresh recorded context (its own cookie jar), reported under `name` when a test fails. */
  context(name: string): ReturnType<typeof newRecordedContext>;
  /** The application's authorization request (code flow, `openid email`, state `e2e`), with extra parameters. */
  authorizeUrl(extra?: Record<string, string>): string;
  /** Redeems the code of a callback URL at /oauth/token with the application's secret (the raw response). */
  exchange(callback: URL): Promise<Response>;
}

export function browserSuite(label: string, appName: string): BrowserSuite {
  const logs: Array<{ name: string; log: ContextLog }> = [];
  let failed = false;
  const suite = {
    async context(name: string) {
      const recorded = await newRecordedContext(suite.browser);
      logs.push({ name, log: recorded.log });
      return recorded;
    },
    authorizeUrl: (extra: Record<string, string> = {}) =>
      `${suite.server.baseUrl}/authorize?${new URLSearchParams({ client_id: suite.app.client_id, redirect_uri: suite.redirectUri, response_type: "code", scope: "openid email", state: "e2e", ...extra })}`,
    exchange: (callback: URL) =>
      fetch(`${suite.server.baseUrl}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: callback.searchParams.get("code") ?? "",
          redirect_uri: suite.redirectUri,
          client_id: suite.app.client_id,
          client_secret: suite.app.client_secret,
        }),
      }),
  } as BrowserSuite;

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      failed = true;
    });
  });

  beforeAll(async () => {
    const server = await tenantServer(await startServer({ shareable: true, vars: { DEV_MESSAGE_SINK: "1" } }), label);
    suite.server = server;
    suite.admin = tenantAdmin(server);
    suite.callbacks = await startCallbackServer();
    suite.redirectUri = `${suite.callbacks.origin}/callback`;
    const [created, browser] = await Promise.all([
      suite.admin.clients.create({
        name: appName,
        app_type: "regular_web",
        callbacks: [suite.redirectUri],
        grant_types: ["authorization_code"],
        token_endpoint_auth_method: "client_secret_post",
      }),
      launchChromium(),
    ]);
    suite.app = { client_id: String(created.client_id), client_secret: String(created.client_secret) };
    suite.browser = browser;
  }, 120_000);

  afterAll(async () => {
    await suite.browser?.close().catch(() => undefined);
    await suite.callbacks?.close().catch(() => undefined);
    if (failed && suite.server) {
      process.stderr.write(`\n--- wrangler output (${label}) ---\n${suite.server.log().slice(-200_000)}\n`);
      for (const { name, log } of logs) process.stderr.write(`\n--- ${name} ---\n${log.requests.join("\n")}\n${log.consoleErrors.join("\n")}\n${log.pageErrors.join("\n")}\n`);
    }
    await suite.server?.stop();
  }, 60_000);

  return suite;
}

