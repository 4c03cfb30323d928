import { beforeAll, describe, expect, it } from "vitest";
import { createTenant, mgmt } from "../helpers/api";
import { redirectParams, seedClient, seedUser, type TestClient } from "../helpers/flows";
import { csrfOf, errorCodeOf, passwordLogin, type TestBrowser } from "../helpers/mfa";
import { expectRefusals, reachKit } from "../helpers/route-reach";

/**
 * Issue 29 point 2: a third-party application (and any application with prompt=consent) asks the signed-in
 * user before it gets scopes; the grant is stored per user, client and audience and read and deleted through
 * /api/v2/grants in the reference platform's shapes.
 */

const PASSWORD = "p4ssw0rd!";
const API = "https://api.consent.example/";
let tenant: string;
let host: string;
let thirdParty: TestClient;
let firstParty: TestClient;
const asTenant = () => ({ headers: { "tenant-id": tenant } });

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  thirdParty = await seedClient(tenant, { is_first_party: false });
  firstParty = await seedClient(tenant);
  const api = await mgmt("POST", "/resource-servers", { ...asTenant(), body: { identifier: API, name: "Orders", scopes: [{ value: "read:orders", description: "Read your orders" }, { value: "write:orders", description: "Place orders for you" }] } });
  expect(api.status).toBe(201);
});

type Grant = { id: string; clientID: string; user_id: string; audience: string; scope: string[] };
const grantsOf = async (userId: string) => (await (await mgmt("GET", `/grants?user_id=${encodeURIComponent(userId)}`, asTenant())).json()) as Grant[];

/** A login that ends on the consent page: the browser, the page's path and its HTML. */
async function loginToConsent(clientId: string, email: string, request: Record<string, string> = {}) {
  const { browser, res } = await passwordLogin(tenant, clientId, email, PASSWORD, request);
  expect(res.status).toBe(302);
  const location = new URL(String(res.headers.get("location")), `http://${host}`);
  expect(location.pathname).toBe("/u2/consent");
  const page = await browser.get(location.pathname + location.search);
  expect(page.status).toBe(200);
  return { browser, path: location.pathname + location.search, html: await page.text() };
}

const decide = (browser: TestBrowser, path: string, html: string, action: "accept" | "deny") => browser.post(path, { _csrf: csrfOf(html), action });

describe("the consent page", () => {
  it("a third-party application asks; Accept stores the grant and the code follows", async () => {
    const user = await seedUser(tenant, "accept@example.com", PASSWORD);
    const { browser, path, html } = await loginToConsent(thirdParty.client_id, user.email as string, { audience: API, scope: "openid read:orders" });
    expect(html).toContain("Read your orders");
    expect(html).not.toContain("Place orders for you");
    const res = await decide(browser, path, html, "accept");
    expect(res.status).toBe(302);
    const { query } = redirectParams(res);
    expect(query.get("code")).toBeTruthy();
    expect(query.get("state")).toBe("xyz");
    const grants = await grantsOf(user.user_id);
    expect(grants).toEqual([{ id: expect.stringMatching(/^gr_/), clientID: thirdParty.client_id, user_id: user.user_id, audience: API, scope: ["read:orders"] }]);
    // The decision is single use: a replayed post is the expired page and issues nothing.
    const replay = await decide(browser, path, html, "accept");
    expect(replay.status).toBe(400);
    expect(errorCodeOf(await replay.text())).toBe("INVALID_LOGIN_SESSION");
  });

  it("asks again only for scopes not yet granted; with all granted the code comes without the page", async () => {
    const user = await seedUser(tenant, "again@example.com", PASSWORD);
    const first = await loginToConsent(thirdParty.client_id, user.email as string, { audience: API, scope: "openid read:orders" });
    await decide(first.browser, first.path, first.html, "accept");
    const more = await loginToConsent(thirdParty.client_id, user.email as string, { audience: API, scope: "openid read:orders write:orders" });
    expect(more.html).toContain("Place orders for you");
    expect(more.html).not.toContain("Read your orders");
    await decide(more.browser, more.path, more.html, "accept");
    expect((await grantsOf(user.user_id))[0]?.scope).toEqual(["read:orders", "write:orders"]);
    const { res } = await passwordLogin(tenant, thirdParty.client_id, user.email as string, PASSWORD, { audience: API, scope: "openid write:orders" });
    expect(redirectParams(res).query.get("code")).toBeTruthy();
  });

  it("Decline answers the application access_denied and stores nothing", async () => {
    const user = await seedUser(tenant, "deny@example.com", PASSWORD);
    const { browser, path, html } = await loginToConsent(thirdParty.client_id, user.email as string);
    const res = await decide(browser, path, html, "deny");
    const { query } = redirectParams(res);
    expect(query.get("error")).toBe("access_denied");
    expect(query.get("state")).toBe("xyz");
    expect(await grantsOf(user.user_id)).toEqual([]);
  });

  it("a first-party application asks nothing, unless prompt=consent", async () => {
    const user = await seedUser(tenant, "first@example.com", PASSWORD);
    const { res } = await passwordLogin(tenant, firstParty.client_id, user.email as string, PASSWORD);
    expect(redirectParams(res).query.get("code")).toBeTruthy();
    const forced = await loginToConsent(firstParty.client_id, user.email as string, { prompt: "consent" });
    expect(forced.html).toContain("Your email address");
  });

  it("prompt=none with consent owed answers consent_required; after consent it answers silently", async () => {
    const user = await seedUser(tenant, "silent@example.com", PASSWORD);
    const { browser, path, html } = await loginToConsent(thirdParty.client_id, user.email as string);
    const query = (extra: Record<string, string>) =>
      `/authorize?${new URLSearchParams({ client_id: thirdParty.client_id, redirect_uri: "https://app.example.com/callback", response_type: "code", scope: "openid profile email", state: "s", ...extra })}`;
    // The browser is signed in by now: the login completed before the page.
    const owed = await browser.get(query({ prompt: "none" }));
    expect(redirectParams(owed).query.get("error")).toBe("consent_required");
    await decide(browser, path, html, "accept");
    const silent = await browser.get(query({ prompt: "none" }));
    expect(redirectParams(silent).query.get("code")).toBeTruthy();
  });

  it("a consent page without the signed-in browser is the expired page", async () => {
    const user = await seedUser(tenant, "stranger@example.com", PASSWORD);
    const { path } = await loginToConsent(thirdParty.client_id, user.email as string);
    const { TestBrowser } = await import("../helpers/mfa");
    const stranger = new TestBrowser(host);
    const res = await stranger.get(path);
    expect(res.status).toBe(400);
  });
});

describe("/api/v2/grants", () => {
  it("deleting a grant brings the consent page back", async () => {
    const user = await seedUser(tenant, "revoke@example.com", PASSWORD);
    const first = await loginToConsent(thirdParty.client_id, user.email as string);
    await decide(first.browser, first.path, first.html, "accept");
    const [grant] = await grantsOf(user.user_id);
    expect(grant?.audience).toBe(`http://${host}/userinfo`);
    expect(grant?.scope).toEqual(["profile", "email"]);
    expect((await mgmt("DELETE", `/grants/${grant?.id}`, asTenant())).status).toBe(204);
    expect(await grantsOf(user.user_id)).toEqual([]);
    await loginToConsent(thirdParty.client_id, user.email as string);
    const missing = await mgmt("DELETE", `/grants/${grant?.id}`, asTenant());
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ statusCode: 404, errorCode: "inexistent_grant" });
  });

  it("DELETE /grants?user_id= removes every grant of the user and no one else's; user_id is required", async () => {
    const a = await seedUser(tenant, "all-a@example.com", PASSWORD);
    const b = await seedUser(tenant, "all-b@example.com", PASSWORD);
    for (const user of [a, b]) {
      const page = await loginToConsent(thirdParty.client_id, user.email as string);
      await decide(page.browser, page.path, page.html, "accept");
    }
    expect((await mgmt("DELETE", `/grants?user_id=${encodeURIComponent(a.user_id)}`, asTenant())).status).toBe(204);
    expect(await grantsOf(a.user_id)).toEqual([]);
    expect(await grantsOf(b.user_id)).toHaveLength(1);
    const bare = await mgmt("DELETE", "/grants", asTenant());
    expect(bare.status).toBe(400);
    expect(await bare.json()).toMatchObject({ statusCode: 400, errorCode: "invalid_query_string" });
  });

  it("lists with client_id and audience filters and the totals envelope", async () => {
    const res = await mgmt("GET", `/grants?client_id=${thirdParty.client_id}&audience=${encodeURIComponent(API)}&include_totals=true&per_page=1`, asTenant());
    expect(res.status).toBe(200);
    const body = (await res.json()) as { grants: Grant[]; total: number; start: number; limit: number };
    expect(body.total).toBeGreaterThanOrEqual(2);
    expect(body.grants).toHaveLength(1);
    expect(body.grants[0]).toMatchObject({ clientID: thirdParty.client_id, audience: API });
  });

  it("who can reach the routes", async () => {
    const kit = await reachKit(["read:grants", "delete:grants"]);
    await expectRefusals(kit, "GET", "/grants", "read:grants");
    await expectRefusals(kit, "DELETE", "/grants/gr_x", "delete:grants");
    await expectRefusals(kit, "DELETE", "/grants?user_id=auth0%7Cx", "delete:grants");
    const ok = await mgmt("GET", "/grants", { token: kit.allowed });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual([]);
  });
});
