import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MANAGEMENT_AUDIENCE } from "./helpers/auth0";
import { chromiumLogin, type OidcApp, startOidcApp, verifiedIdToken } from "./helpers/oidc-app";

/**
 * Issue 32 end to end on a running `wrangler dev`: post-login actions deployed with the auth0 SDK. One calls a
 * local HTTP API (a loopback server of this test) and puts its answer into a namespaced claim; its calls to a
 * private address and to a host outside the tenant's allowlist are refused and recorded in the execution.
 * Another redirects Chromium to a local page, which posts back to /continue; the login completes.
 */
const random = () => randomBytes(6).toString("hex");
const NS = "https://gatehouse.example";

/** The test's local service: an HTTP API and the page a redirect goes to (a form that posts back). */
async function startLocalService(continueUrl: string): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname === "/api/tier") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ tier: "platinum" }));
      return;
    }
    if (url.pathname === "/terms") {
      const state = String(url.searchParams.get("state") ?? "").replace(/[^A-Za-z0-9_-]/g, "");
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(`<!doctype html><title>Terms</title><h1>Terms of service</h1>
<form method="post" action="${continueUrl}"><input type="hidden" name="state" value="${state}">
<input type="hidden" name="answer" value="accepted"><button type="submit">Accept</button></form>`);
      return;
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

describe("post-login actions that call out and redirect, through the auth0 SDK and a Chromium login", () => {
  let app: OidcApp;
  let local: Awaited<ReturnType<typeof startLocalService>>;
  let token: string;
  const user = { email: `redirect-${random()}@example.com`, password: `Correct-Horse-${random()}` };

  /** A management API call with the deployment's client (for what the SDK has no typed method for). */
  const api = async (method: string, path: string, body?: unknown) =>
    fetch(`${app.server.baseUrl}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  beforeAll(async () => {
    app = await startOidcApp("Actions Redirect E2E App");
    local = await startLocalService(`${app.server.baseUrl}/continue`);
    const issued = await fetch(`${app.server.baseUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "client_credentials", client_id: app.server.clientId, client_secret: app.server.clientSecret, audience: MANAGEMENT_AUDIENCE }),
    });
    token = ((await issued.json()) as { access_token: string }).access_token;
    await app.management.users.create({ connection: "Username-Password-Authentication", email: user.email, password: user.password });
  }, 120_000);

  afterAll(async () => {
    await local?.close().catch(() => undefined);
    await app?.close();
  }, 60_000);

  it("enriches the token from a local API, refuses a private address and a host off the allowlist, and completes a login sent to a page that posts back to /continue", async () => {
    // Only the test's loopback API is allowed out (a private address is refused by the policy anyway).
    expect((await api("PATCH", "/tenants/settings", { egress_allowlist: ["127.0.0.1"] })).status).toBe(200);
    const enrich = await app.management.actions.create({
      name: `enrich-${random()}`,
      supported_triggers: [{ id: "post-login", version: "v3" }],
      code: `exports.onExecutePostLogin = async (event, api) => {
        const res = await fetch(${JSON.stringify(`${local.origin}/api/tier`)});
        api.idToken.setCustomClaim("${NS}/tier", (await res.json()).tier);
        for (const [name, url] of [["private", "http://10.1.2.3/"], ["elsewhere", "https://example.com/"]]) {
          try { await fetch(url); api.idToken.setCustomClaim("${NS}/" + name, "reached"); }
          catch (e) { api.idToken.setCustomClaim("${NS}/" + name, e.message); }
        }
      };`,
    });
    const terms = await app.management.actions.create({
      name: `terms-${random()}`,
      supported_triggers: [{ id: "post-login", version: "v3" }],
      code: `exports.onExecutePostLogin = async (event, api) => {
        api.redirect.sendUserTo(${JSON.stringify(`${local.origin}/terms`)}, { query: { lang: "en" } });
      };
      exports.onContinuePostLogin = async (event, api) => {
        api.idToken.setCustomClaim("${NS}/terms", event.request.body.answer);
      };`,
    });
    for (const action of [enrich, terms]) await app.management.actions.deploy(action.id ?? "");
    await app.management.actions.triggers.bindings.updateMany("post-login", {
      bindings: [enrich, terms].map((a) => ({ ref: { type: "action_id" as const, value: a.id ?? "" } })),
    });

    let visited = "";
    const login = await chromiumLogin(app, user, {
      between: async (page) => {
        await page.waitForURL(`${local.origin}/terms**`, { timeout: 15_000 });
        visited = page.url();
        await page.getByRole("button", { name: "Accept" }).click();
      },
    });
    expect(new URL(visited).searchParams.get("lang")).toBe("en");
    expect(new URL(visited).searchParams.get("state")).toBeTruthy();
    const claims = await verifiedIdToken(app, login);
    expect(claims).toMatchObject({ [`${NS}/tier`]: "platinum", [`${NS}/terms`]: "accepted" });
    expect(claims[`${NS}/private`]).toMatch(/^Refused by the egress policy: 10\.1\.2\.3 is a private/);
    expect(claims[`${NS}/elsewhere`]).toBe("Refused by the egress policy: example.com is not in the tenant's allowlist");

    // The refusals are recorded in the execution the login's success log names.
    const logs = (await (await api("GET", `/logs?q=${encodeURIComponent(`type:s AND user_id:"${String(claims.sub)}"`)}`)).json()) as { details?: { actions?: { executions?: string[] } } }[];
    const execution = logs.find((l) => l.details?.actions?.executions?.length)?.details?.actions?.executions?.[0];
    expect(execution, JSON.stringify(logs).slice(0, 500)).toBeTruthy();
    const record = (await (await api("GET", `/actions/executions/${execution}`)).json()) as { results: { egress?: { host: string; status: number | null; error?: string }[] }[] };
    const calls = record.results.flatMap((r) => r.egress ?? []);
    expect(calls.find((x) => x.host.startsWith("127.0.0.1"))?.status).toBe(200);
    expect(calls.find((x) => x.host === "10.1.2.3")?.error).toMatch(/private/);
    expect(calls.find((x) => x.host === "example.com")?.error).toMatch(/allowlist/);
  });
});
