import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { ManagementClient } from "auth0";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { sdkOptions } from "./helpers/auth0";
import { launchChromium, newRecordedContext } from "./helpers/browser";

/**
 * A real single-page app: the reference platform's `@auth0/auth0-spa-js` (from npm, served by a loopback
 * static server) in headless Chromium. The app is on `http://localhost:<its port>`, another origin on the
 * same site as the identity server, as an app on `app.example.com` with its tenant on a custom domain
 * `login.example.com` would be: browsers that block third-party cookies (Playwright's incognito-like
 * contexts do) only let a session cookie into a same-site iframe; across sites, refresh tokens are the way.
 * It logs in through the universal login page, rotates refresh tokens with CORS form posts carrying its
 * `Auth0-Client` header, authenticates silently in a cross-site iframe (`prompt=none`,
 * `response_mode=web_message`), and logs out through `/v2/logout`.
 */

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>SPA</title>
<script src="/auth0-spa-js.js"></script></head><body><p>spa</p></body></html>`;

/** Serves the SPA page at every path and the SDK's UMD build. */
async function startSpaServer(): Promise<{ origin: string; server: Server }> {
  const sdk = await readFile(join(ROOT, "node_modules/@auth0/auth0-spa-js/dist/auth0-spa-js.production.js"));
  const server = createServer((req, res) => {
    if (req.url === "/auth0-spa-js.js") {
      res.writeHead(200, { "content-type": "text/javascript" }).end(sdk);
    } else if (req.url === "/favicon.ico") {
      res.writeHead(404).end();
    } else {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" }).end(PAGE);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return { origin: `http://localhost:${(server.address() as AddressInfo).port}`, server };
}

describe("@auth0/auth0-spa-js in headless Chromium", () => {
  let server: RunningServer;
  let spa: { origin: string; server: Server };
  let browser: Browser;
  let page: Page;
  let clientId: string;
  const email = `spa-${Date.now()}@example.com`;
  const password = `Spa-Pw-${crypto.randomUUID()}`;
  const tokenRequests: string[] = [];
  const authorizeRequests: URL[] = [];

  /** Options for `createAuth0Client`, evaluated in the page. */
  const options = (useRefreshTokens: boolean) => ({
    domain: server.baseUrl,
    clientId,
    authorizationParams: { redirect_uri: `${spa.origin}/`, scope: "openid profile email offline_access" },
    useRefreshTokens,
    cacheLocation: useRefreshTokens ? "localstorage" : "memory",
  });

  beforeAll(async () => {
    server = await startServer({ shareable: true });
    spa = await startSpaServer();
    const admin = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
    const app = await admin.clients.create({
      name: "SPA",
      app_type: "spa",
      token_endpoint_auth_method: "none",
      callbacks: [`${spa.origin}/`],
      web_origins: [spa.origin],
      allowed_logout_urls: [`${spa.origin}/`],
      grant_types: ["authorization_code", "refresh_token"],
      refresh_token: { rotation_type: "rotating", expiration_type: "expiring", leeway: 0 },
    });
    clientId = String(app.client_id);
    const signup = await fetch(`${server.baseUrl}/dbconnections/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: clientId, email, password, connection: "Username-Password-Authentication" }),
    });
    expect(signup.status).toBe(200);
    browser = await launchChromium();
    const recorded = await newRecordedContext(browser);
    page = recorded.page;
    recorded.context.on("request", (request) => {
      const url = new URL(request.url());
      if (url.pathname === "/oauth/token") tokenRequests.push(request.postData() ?? "");
      if (url.pathname === "/authorize") {
        authorizeRequests.push(url);
      }
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await new Promise<void>((resolve) => spa?.server.close(() => resolve()));
    await server?.stop();
  });

  it("logs in with a redirect through the universal login page", async () => {
    await page.goto(`${spa.origin}/`);
    await page.evaluate(async (o) => {
      const w = window as unknown as { auth0: { createAuth0Client(o: unknown): Promise<{ loginWithRedirect(): Promise<void> }> } };
      const client = await w.auth0.createAuth0Client(o);
      await client.loginWithRedirect();
    }, options(true));
    await page.waitForURL(/\/u2\/login/);
    await page.getByLabel("Email address").fill(email);
    await page.getByLabel("Password", { exact: true }).fill(password);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForURL((url) => url.origin === spa.origin && url.searchParams.has("code"));
    const user = await page.evaluate(async (o) => {
      const w = window as unknown as {
        auth0: { createAuth0Client(o: unknown): Promise<{ handleRedirectCallback(): Promise<unknown>; getUser(): Promise<{ email: string }> }> };
      };
      const client = await w.auth0.createAuth0Client(o);
      await client.handleRedirectCallback();
      return client.getUser();
    }, options(true));
    expect(user.email).toBe(email);
  });

  it("rotates its refresh token from the browser with the token endpoint's CORS", async () => {
    const before = tokenRequests.length;
    const results = await page.evaluate(async (o) => {
      const w = window as unknown as {
        auth0: { createAuth0Client(o: unknown): Promise<{ getTokenSilently(p: unknown): Promise<{ access_token: string }> }> };
      };
      const client = await w.auth0.createAuth0Client(o);
      const first = await client.getTokenSilently({ cacheMode: "off", detailedResponse: true });
      const second = await client.getTokenSilently({ cacheMode: "off", detailedResponse: true });
      return [first.access_token, second.access_token];
    }, options(true));
    expect(results[0]).not.toBe(results[1]);
    const refreshes = tokenRequests.slice(before).filter((body) => body.includes("grant_type=refresh_token"));
    expect(refreshes).toHaveLength(2);
    // Rotation: the second refresh presented a different token from the first.
    const presented = refreshes.map((body) => new URLSearchParams(body).get("refresh_token"));
    expect(presented[0]).not.toBe(presented[1]);
  });

  it("authenticates silently in an iframe of another origin with response_mode=web_message", async () => {
    const token = await page.evaluate(async (o) => {
      const w = window as unknown as { auth0: { createAuth0Client(o: unknown): Promise<{ getTokenSilently(p: unknown): Promise<string> }> } };
      const client = await w.auth0.createAuth0Client(o);
      return client.getTokenSilently({ cacheMode: "off" });
    }, options(false));
    expect(token.split(".")).toHaveLength(3);
    const silent = authorizeRequests.find((u) => u.searchParams.get("response_mode") === "web_message");
    expect(silent?.searchParams.get("prompt")).toBe("none");
  });

  it("logs out through /v2/logout, after which silent authentication needs a login", async () => {
    const logoutRequest = page.waitForRequest((r) => new URL(r.url()).pathname === "/v2/logout");
    // The SDK navigates away, which ends the evaluation's context: that rejection is expected.
    await page
      .evaluate(async (o) => {
        const w = window as unknown as { auth0: { createAuth0Client(o: unknown): Promise<{ logout(p: unknown): Promise<void> }> } };
        const client = await w.auth0.createAuth0Client(o);
        await client.logout({ logoutParams: { returnTo: `${location.origin}/` } });
      }, options(true))
      .catch(() => undefined);
    const response = await (await logoutRequest).response();
    expect(response?.status()).toBe(302);
    expect(response?.headers().location).toBe(`${spa.origin}/`);
    await page.waitForURL(`${spa.origin}/`);
    await page.waitForLoadState("load");
    const error = await page.evaluate(async (o) => {
      const w = window as unknown as { auth0: { createAuth0Client(o: unknown): Promise<{ getTokenSilently(p: unknown): Promise<string> }> } };
      const client = await w.auth0.createAuth0Client(o);
      return client.getTokenSilently({ cacheMode: "off" }).then(
        () => "no error",
        (e: { error?: string }) => e.error ?? String(e),
      );
    }, options(false));
    expect(error).toBe("login_required");
  });
});
