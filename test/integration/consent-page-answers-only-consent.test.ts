import { beforeAll, describe, expect, it } from "vitest";
import { createTenant } from "../helpers/api";
import { seedClient, seedUser, type TestClient } from "../helpers/flows";
import { csrfOf, errorCodeOf, passwordLogin, setFactors, setPolicy } from "../helpers/mfa";

/**
 * Security review (review5): the consent page answers a consent transaction only, and never from a session
 * that must first pass MFA. Before the fix, any pending login transaction's `state` (the one /authorize opens
 * for prompt=login, max_age or a password-only session under an MFA policy) could be posted to /u2/consent
 * with "Accept", and the browser's password-only session got an authorization code: no login, no second
 * factor.
 */

const PASSWORD = "p4ssw0rd!";
let tenant: string;
let host: string;
let firstParty: TestClient;
let thirdParty: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  firstParty = await seedClient(tenant);
  thirdParty = await seedClient(tenant, { is_first_party: false });
});

const authorizeQuery = (clientId: string, extra: Record<string, string> = {}) =>
  new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: "https://app.example.com/callback", scope: "openid", state: "xyz", ...extra });

describe("the consent page answers only a consent transaction", () => {
  it("a login transaction (prompt=login) posted to /u2/consent issues no code under an MFA policy the session never passed", async () => {
    const user = await seedUser(tenant, "bypass@example.com", PASSWORD);
    // A password-only session, made before the tenant asks for MFA.
    const { browser, res } = await passwordLogin(tenant, firstParty.client_id, user.email as string, PASSWORD);
    expect(res.status).toBe(302);
    expect(String(res.headers.get("location"))).toContain("code=");
    await setFactors(tenant, { otp: true });
    await setPolicy(tenant, ["all-applications"]);
    try {
      // /authorize itself asks this session for the second factor ...
      const sso = await browser.get(`/authorize?${authorizeQuery(firstParty.client_id)}`);
      expect(new URL(String(sso.headers.get("location")), `http://${host}`).pathname).toBe("/u2/mfa");
      // ... and prompt=login opens a login transaction that wants the password again.
      const fresh = await browser.get(`/authorize?${authorizeQuery(firstParty.client_id, { prompt: "login" })}`);
      const loginPath = new URL(String(fresh.headers.get("location")), `http://${host}`);
      expect(loginPath.pathname).toBe("/u2/login");
      const state = String(loginPath.searchParams.get("state"));
      const loginPage = await browser.get(`/u2/login?state=${state}`);
      const csrf = csrfOf(await loginPage.text());
      // The consent page is not a way around either.
      const page = await browser.get(`/u2/consent?state=${state}`);
      expect(page.status).toBe(400);
      expect(errorCodeOf(await page.text())).toBe("INVALID_LOGIN_SESSION");
      const post = await browser.post(`/u2/consent?state=${state}`, { _csrf: csrf, action: "accept" });
      expect(post.status).toBe(400);
      expect(post.headers.get("location")).toBeNull();
      expect(errorCodeOf(await post.text())).toBe("INVALID_LOGIN_SESSION");
    } finally {
      await setPolicy(tenant, []);
    }
  });

  it("a consent transaction opened before an MFA policy asks for the second factor before it answers", async () => {
    const user = await seedUser(tenant, "policy-later@example.com", PASSWORD);
    const { browser, res } = await passwordLogin(tenant, thirdParty.client_id, user.email as string, PASSWORD);
    expect(res.status).toBe(302);
    const consentPath = new URL(String(res.headers.get("location")), `http://${host}`);
    expect(consentPath.pathname).toBe("/u2/consent");
    const html = await (await browser.get(consentPath.pathname + consentPath.search)).text();
    await setFactors(tenant, { otp: true });
    await setPolicy(tenant, ["all-applications"]);
    try {
      const post = await browser.post(consentPath.pathname + consentPath.search, { _csrf: csrfOf(html), action: "accept" });
      expect(post.status).toBe(302);
      const location = new URL(String(post.headers.get("location")), `http://${host}`);
      expect(location.pathname).toBe("/u2/mfa");
      expect(location.searchParams.get("code")).toBeNull();
    } finally {
      await setPolicy(tenant, []);
    }
  });

  it("the consent a login asks for still works: Accept answers the application with a code", async () => {
    const user = await seedUser(tenant, "still-works@example.com", PASSWORD);
    const { browser, res } = await passwordLogin(tenant, thirdParty.client_id, user.email as string, PASSWORD);
    const consentPath = new URL(String(res.headers.get("location")), `http://${host}`);
    expect(consentPath.searchParams.get("state")).toMatch(/^lc_/);
    const html = await (await browser.get(consentPath.pathname + consentPath.search)).text();
    const post = await browser.post(consentPath.pathname + consentPath.search, { _csrf: csrfOf(html), action: "accept" });
    expect(post.status).toBe(302);
    expect(new URL(String(post.headers.get("location"))).searchParams.get("code")).toBeTruthy();
  });
});
