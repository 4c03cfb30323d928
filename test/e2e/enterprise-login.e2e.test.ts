import type { Server } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import Provider from "oidc-provider";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSuite } from "./helpers/browser-suite";
import { managementCall, managementToken } from "./helpers/auth0";
import { axeResults, screenshot } from "./helpers/browser";

/**
 * Issue 29 point 0 in Chromium against `wrangler dev`: the login page offers the application's enterprise
 * OpenID Connect connection (the upstream is `oidc-provider`, run by this test on 127.0.0.1) and its
 * passwordless email connection (the code read from the development sink). Both land back at the
 * application with a Gatehouse ID token; the new pages pass axe-core.
 */

const suite = browserSuite("enterprise-login", "Enterprise App");
const UPSTREAM_CLIENT = "gatehouse";
const UPSTREAM_SECRET = "a-long-upstream-client-secret-for-the-e2e";
let idp: Server;
let idpIssuer: string;

async function axeClean(page: Page) {
  const result = await axeResults(page);
  expect(result.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
}

async function tokensOf(callback: URL) {
  const res = await suite.exchange(callback);
  expect(res.status, await res.clone().text()).toBe(200);
  const { id_token } = (await res.json()) as { id_token: string };
  return JSON.parse(Buffer.from(id_token.split(".")[1] as string, "base64url").toString()) as Record<string, unknown>;
}

describe("enterprise and passwordless connections on the login page", () => {
  beforeAll(async () => {
    // The upstream: oidc-provider with its development login pages, one confidential client (Gatehouse).
    const port = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    idpIssuer = `http://127.0.0.1:${port}`;
    const provider = new Provider(idpIssuer, {
      clients: [
        {
          client_id: UPSTREAM_CLIENT,
          client_secret: UPSTREAM_SECRET,
          redirect_uris: [`${suite.server.baseUrl}/login/callback`],
          token_endpoint_auth_method: "client_secret_post",
          grant_types: ["authorization_code"],
          response_types: ["code"],
        },
      ],
      cookies: { keys: ["e2e-cookie-key-one"] },
      claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
      findAccount: async (_ctx: unknown, id: string) => ({
        accountId: id,
        claims: async () => ({ sub: id, email: `${id}@idp.example`, email_verified: true, name: `User ${id}` }),
      }),
    });
    idp = await new Promise<Server>((resolve) => {
      const server = provider.listen(port, "127.0.0.1", () => resolve(server));
    });
    const token = await managementToken(suite.server);
    const sso = await managementCall<{ id: string }>(suite.server, token, "POST", "/connections", {
      name: "partner-sso",
      strategy: "oidc",
      display_name: "Partner SSO",
      options: { type: "back_channel", issuer: idpIssuer, client_id: UPSTREAM_CLIENT, client_secret: UPSTREAM_SECRET, scopes: "openid profile email" },
    });
    const email = await managementCall<{ id: string }>(suite.server, token, "POST", "/connections", { name: "email", strategy: "email" });
    const res = await fetch(`${suite.server.baseUrl}/api/v2/connections?name=Username-Password-Authentication`, { headers: { authorization: `Bearer ${token}` } });
    const [database] = (await res.json()) as { id: string }[];
    await managementCall(suite.server, token, "PATCH", `/clients/${suite.app.client_id}/connections`, [database?.id, email.id, sso.id], 200);
  }, 120_000);

  afterAll(async () => {
    await new Promise((resolve) => idp?.close(resolve));
  });

  it("Continue with Partner SSO → the upstream's login → back with an ID token whose sub is oidc|partner-sso|<sub>", { timeout: 120_000 }, async () => {
    const { page } = await suite.context("oidc");
    await page.goto(suite.authorizeUrl({ scope: "openid email profile" }));
    await page.getByRole("link", { name: "Continue with Partner SSO" }).waitFor();
    await axeClean(page);
    await screenshot(page, "login-enterprise-buttons.png");
    await page.getByRole("link", { name: "Continue with Partner SSO" }).click();
    await page.waitForURL((url) => url.origin === idpIssuer);
    await page.locator('input[name="login"]').fill("grace");
    await page.locator('input[name="password"]').fill("anything");
    const arrived = suite.callbacks.next("/callback");
    await page.locator('button[type="submit"]').click();
    // oidc-provider's development consent step, when it asks for one.
    const consent = page.locator('button[type="submit"]');
    await Promise.race([arrived, consent.click({ timeout: 15_000 }).catch(() => undefined)]);
    const callback = await arrived;
    const claims = await tokensOf(callback);
    expect(claims.sub).toBe("oidc|partner-sso|grace");
    expect(claims.email).toBe("grace@idp.example");
    expect(claims.email_verified).toBe(true);
  });

  it("Continue with email code → the code from the development sink → back with an ID token of an email| user", { timeout: 120_000 }, async () => {
    const { page } = await suite.context("passwordless");
    const email = `page-${Date.now()}@example.com`;
    await page.goto(suite.authorizeUrl());
    await page.getByRole("link", { name: "Continue with email code" }).click();
    await page.getByLabel("Email address").fill(email);
    await axeClean(page);
    await page.getByRole("button", { name: "Send code" }).click();
    await page.getByRole("heading", { name: "Enter your code" }).waitFor();
    const { messages } = (await (await fetch(`${suite.server.baseUrl}/__dev/messages?to=${encodeURIComponent(email)}`)).json()) as { messages: { body: string }[] };
    const code = /(\d{6}) is your verification code/.exec(messages[0]?.body ?? "")?.[1] as string;
    await page.getByLabel("Code", { exact: true }).fill(code === "000000" ? "111111" : "000000");
    await page.getByRole("button", { name: "Continue" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("Wrong email or verification code.");
    await axeClean(page);
    await screenshot(page, "login-passwordless-code-error.png");
    const arrived = suite.callbacks.next("/callback");
    await page.getByLabel("Code", { exact: true }).fill(code);
    await page.getByRole("button", { name: "Continue" }).click();
    const claims = await tokensOf(await arrived);
    expect(String(claims.sub)).toMatch(/^email\|/);
    expect(claims.email).toBe(email);
  });
});
