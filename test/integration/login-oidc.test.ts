import { decodeJwt, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { toBase64Url } from "../../src/shared/crypto/encoding";
import { createTenant, mgmt } from "../helpers/api";
import { pendingLogin, redirectParams, seedClient, type TestClient, tokenForm } from "../helpers/flows";
import { errorCodeOf, locationOf, setFactors, setPolicy, TestBrowser } from "../helpers/mfa";
import { logsOf, relay, tenantSql } from "../helpers/outbox";

/**
 * Issue 29 point 0: enterprise OpenID Connect connections on the login page. The upstream identity provider
 * runs inside the test behind the egress boundary (global fetch of https://idp.example.com): discovery,
 * JWKS, a token endpoint that checks the PKCE verifier and the client secret, userinfo.
 */

const IDP = "https://idp.example.com";
const CALLBACK = "https://app.example.com/callback";
const UPSTREAM_CLIENT = "gatehouse-at-idp";
const UPSTREAM_SECRET = "upstream-secret-value";
let tenant: string;
let host: string;
let client: TestClient;
let signing: CryptoKey;
let stranger: CryptoKey;
let publicJwk: Record<string, unknown>;

/** What the IdP will put in the next ID token for a code, and how it signs it. */
interface Grant {
  nonce: string;
  challenge: string;
  redirectUri: string;
  claims: JWTPayload & Record<string, unknown>;
  key?: CryptoKey;
}
const grants = new Map<string, Grant>();
let tokenCalls = 0;

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

async function idp(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.pathname === "/.well-known/openid-configuration") {
    return json({ issuer: `${IDP}/`, authorization_endpoint: `${IDP}/authorize`, token_endpoint: `${IDP}/token`, jwks_uri: `${IDP}/jwks`, userinfo_endpoint: `${IDP}/userinfo` });
  }
  if (url.pathname === "/jwks") return json({ keys: [publicJwk] });
  if (url.pathname === "/token") {
    tokenCalls++;
    const form = new URLSearchParams(await request.text());
    const grant = grants.get(form.get("code") ?? "");
    grants.delete(form.get("code") ?? "");
    const verifierHash = toBase64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(form.get("code_verifier") ?? ""))));
    if (!grant || form.get("client_secret") !== UPSTREAM_SECRET || form.get("client_id") !== UPSTREAM_CLIENT || verifierHash !== grant.challenge || form.get("redirect_uri") !== grant.redirectUri) {
      return json({ error: "invalid_grant" }, 400);
    }
    const idToken = await new SignJWT({ nonce: grant.nonce, ...grant.claims })
      .setProtectedHeader({ alg: "RS256", kid: "idp-key" })
      .setIssuer(`${IDP}/`)
      .setAudience(UPSTREAM_CLIENT)
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(grant.key ?? signing);
    return json({ access_token: `at-${grant.claims.sub}`, token_type: "Bearer", id_token: idToken });
  }
  if (url.pathname === "/userinfo") {
    const sub = (request.headers.get("authorization") ?? "").replace("Bearer at-", "");
    return json({ sub, picture: "https://idp.example.com/avatar.png" });
  }
  return new Response("not found", { status: 404 });
}

const realFetch = globalThis.fetch;
beforeAll(async () => {
  const pair = await generateKeyPair("RS256");
  signing = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: "idp-key", alg: "RS256", use: "sig" };
  stranger = (await generateKeyPair("RS256")).privateKey;
  vi.spyOn(globalThis, "fetch").mockImplementation((input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    return request.url.startsWith(IDP) ? idp(request) : realFetch(input, init);
  });
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant);
  const created = await mgmt("POST", "/connections", {
    headers: { "tenant-id": tenant },
    body: {
      name: "acme-sso",
      strategy: "oidc",
      display_name: "Acme SSO",
      enabled_clients: [client.client_id],
      options: { type: "back_channel", issuer: `${IDP}/`, client_id: UPSTREAM_CLIENT, client_secret: UPSTREAM_SECRET, scopes: "openid profile email" },
    },
  });
  expect(created.status, await created.clone().text()).toBe(201);
});
afterAll(() => vi.restoreAllMocks());

/** A login on the page up to the upstream's authorize endpoint; answers the browser and the upstream request. */
async function toUpstream(request: Record<string, string> = {}) {
  const browser = new TestBrowser(host);
  const login = await pendingLogin(tenant, client.client_id, request);
  const page = await browser.get(`/u2/login?state=${login.state}`);
  let start: Response;
  if (request.connection) {
    start = await browser.follow(page);
  } else {
    const html = await page.text();
    expect(html).toContain("Continue with Acme SSO");
    start = await browser.get(`/u2/enterprise?state=${login.state}&connection=acme-sso`);
  }
  expect(start.status).toBe(302);
  const upstream = new URL(start.headers.get("location") ?? "");
  expect(`${upstream.origin}${upstream.pathname}`).toBe(`${IDP}/authorize`);
  return { browser, login, upstream: upstream.searchParams };
}

/** The upstream "logs the user in": a code for these claims, bound to the request's nonce and PKCE challenge. */
function upstreamCode(q: URLSearchParams, claims: Grant["claims"], key?: CryptoKey): string {
  const code = crypto.randomUUID();
  grants.set(code, { nonce: q.get("nonce") as string, challenge: q.get("code_challenge") as string, redirectUri: q.get("redirect_uri") as string, claims, ...(key ? { key } : {}) });
  return code;
}

const callback = (browser: TestBrowser, params: Record<string, string>) => browser.get(`/login/callback?${new URLSearchParams(params)}`);

describe("enterprise OpenID Connect connection", () => {
  it("logs in through the upstream: state, nonce and PKCE, a verified ID token, user oidc|acme-sso|<sub>, profile refreshed at each login", async () => {
    const { browser, upstream } = await toUpstream();
    expect(upstream.get("client_id")).toBe(UPSTREAM_CLIENT);
    expect(upstream.get("redirect_uri")).toBe(`http://${host}/login/callback`);
    expect(upstream.get("code_challenge_method")).toBe("S256");
    expect(upstream.get("scope")).toBe("openid profile email");
    expect(upstream.get("nonce")).toMatch(/^[\w-]{40,}$/);
    const sub = `u-${crypto.randomUUID().slice(0, 8)}`;
    const code = upstreamCode(upstream, { sub, email: "Ada@Acme.example", email_verified: true, name: "Ada Lovelace" });
    const res = await callback(browser, { code, state: upstream.get("state") as string });
    expect(res.status, await res.clone().text()).toBe(302);
    const { url, query } = redirectParams(res);
    expect(`${url.origin}${url.pathname}`).toBe(CALLBACK);
    const tokens = await tokenForm({ grant_type: "authorization_code", code: query.get("code") as string, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
    expect(tokens.status).toBe(200);
    const idToken = decodeJwt(((await tokens.json()) as { id_token: string }).id_token);
    expect(idToken.sub).toBe(`oidc|acme-sso|${sub}`);
    expect(idToken.email).toBe("ada@acme.example");
    expect(idToken.email_verified).toBe(true);
    expect(idToken.picture).toBe("https://idp.example.com/avatar.png");

    // The same callback again (replay): the state was spent.
    const replay = await callback(browser, { code, state: upstream.get("state") as string });
    expect(replay.status).toBe(400);
    expect(errorCodeOf(await replay.text())).toBe("INVALID_STATE");

    // A second login refreshes the profile from the upstream (the reference's default).
    const second = await toUpstream({ connection: "acme-sso" });
    const again = await callback(second.browser, { code: upstreamCode(second.upstream, { sub, email: "ada@acme.example", email_verified: false, name: "Ada King" }), state: second.upstream.get("state") as string });
    expect(again.status).toBe(302);
    const user = (await (await mgmt("GET", `/users/${encodeURIComponent(`oidc|acme-sso|${sub}`)}`, { headers: { "tenant-id": tenant } })).json()) as Record<string, unknown>;
    expect(user.name).toBe("Ada King");
    expect(user.email_verified).toBe(false);
    expect(user.logins_count).toBe(2);
  });

  it("refuses a forged callback, one from another browser, a token signed by another key, a wrong nonce, a wrong verifier and an upstream denial; no user is created", async () => {
    const countBefore = tokenCalls;
    const forged = await callback(new TestBrowser(host), { code: "x", state: "made-up" });
    expect(forged.status).toBe(400);
    expect(errorCodeOf(await forged.text())).toBe("INVALID_STATE");

    // Another browser (no binding cookie) cannot spend a real state.
    const a = await toUpstream();
    const elsewhere = await callback(new TestBrowser(host), { code: upstreamCode(a.upstream, { sub: "mallory" }), state: a.upstream.get("state") as string });
    expect(elsewhere.status).toBe(400);
    expect(tokenCalls).toBe(countBefore);

    const denied = await toUpstream();
    const deniedRes = await callback(denied.browser, { error: "access_denied", error_description: "User cancelled", state: denied.upstream.get("state") as string });
    expect(deniedRes.status).toBe(302);
    expect(redirectParams(deniedRes).query.get("error")).toBe("access_denied");
    expect(redirectParams(deniedRes).query.get("error_description")).toBe("User cancelled");

    const sub = `bad-${crypto.randomUUID().slice(0, 8)}`;
    const wrongKey = await toUpstream();
    const wrongKeyRes = await callback(wrongKey.browser, { code: upstreamCode(wrongKey.upstream, { sub, email: "x@acme.example", email_verified: true }, stranger), state: wrongKey.upstream.get("state") as string });
    expect(wrongKeyRes.status).toBe(302);
    expect(redirectParams(wrongKeyRes).query.get("error")).toBe("access_denied");

    const wrongNonce = await toUpstream();
    const q = new URLSearchParams(wrongNonce.upstream);
    q.set("nonce", "another-login");
    const wrongNonceRes = await callback(wrongNonce.browser, { code: upstreamCode(q, { sub }), state: wrongNonce.upstream.get("state") as string });
    expect(redirectParams(wrongNonceRes).query.get("error")).toBe("access_denied");

    // The upstream checks PKCE: a code issued for another challenge is refused at its token endpoint.
    const wrongPkce = await toUpstream();
    const p = new URLSearchParams(wrongPkce.upstream);
    p.set("code_challenge", "A".repeat(43));
    const wrongPkceRes = await callback(wrongPkce.browser, { code: upstreamCode(p, { sub }), state: wrongPkce.upstream.get("state") as string });
    expect(redirectParams(wrongPkceRes).query.get("error")).toBe("access_denied");

    const missing = await mgmt("GET", `/users/${encodeURIComponent(`oidc|acme-sso|${sub}`)}`, { headers: { "tenant-id": tenant } });
    expect(missing.status).toBe(404);
    await relay(tenant);
    const failures = (await logsOf(tenant, `?q=${encodeURIComponent('type:"f"')}`)).map((l) => l.description);
    expect(failures.some((d) => d.includes("access_denied"))).toBe(true);
    expect(failures.some((d) => d.includes("Invalid ID token"))).toBe(true);
  });

  it("management API: validates the oidc options and keeps the client secret sealed", async () => {
    const headers = { "tenant-id": tenant };
    const base = { type: "back_channel", issuer: `${IDP}/`, client_id: "c", client_secret: "s" };
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...base, client_id: undefined }, /options\.client_id/],
      [{ ...base, issuer: undefined }, /discovery_url or options\.issuer/],
      [{ ...base, type: "front_channel" }, /front_channel is not supported/],
      [{ ...base, issuer: "http://169.254.169.254/" }, /private, link-local, metadata/],
      [{ ...base, client_secret: undefined }, /client_secret/],
    ];
    for (const [options, message] of cases) {
      const res = await mgmt("POST", "/connections", { headers, body: { name: `bad-${crypto.randomUUID().slice(0, 6)}`, strategy: "oidc", options } });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(message);
    }
    const enc = await mgmt("GET", "/connections?strategy=oidc", { headers });
    expect(enc.status).toBe(200);
    const stored = (await enc.json()) as { name: string; options: Record<string, unknown> }[];
    expect(stored.map((x) => x.name)).toEqual(["acme-sso"]);
    // At rest the client secret is only in the encrypted column.
    const [row] = await tenantSql<{ options: string; secrets_enc: string | null }>(tenant, "SELECT options, secrets_enc FROM connections WHERE name = 'acme-sso'");
    expect(row?.options).not.toContain(UPSTREAM_SECRET);
    expect(row?.secrets_enc).toBeTruthy();
    expect(row?.secrets_enc).not.toContain(UPSTREAM_SECRET);
  });

  it("GET /connections shows the oidc client secret sealed; written back as read (deploy-cli) it keeps the stored secret; a new one replaces it", async () => {
    const headers = { "tenant-id": tenant };
    const read = async () => ((await (await mgmt("GET", "/connections?name=acme-sso", { headers })).json()) as { id: string; options: Record<string, unknown> }[])[0];
    const shown = await read();
    expect(String(shown?.options.client_secret)).toMatch(/^enc:v1:/);
    expect(JSON.stringify(await (await mgmt("GET", `/connections/${shown?.id}`, { headers })).json())).not.toContain(UPSTREAM_SECRET);
    expect(shown?.options.client_id).toBe(UPSTREAM_CLIENT);
    // Read, then write the whole options object back: the upstream still gets the real secret.
    const written = await mgmt("PATCH", `/connections/${shown?.id}`, { headers, body: { options: shown?.options } });
    expect(written.status).toBe(200);
    const login = async () => {
      const { browser, upstream } = await toUpstream({ connection: "acme-sso" });
      const code = upstreamCode(upstream, { sub: `rt-${crypto.randomUUID().slice(0, 8)}`, email: "rt@acme.example", email_verified: true });
      return redirectParams(await callback(browser, { code, state: upstream.get("state") as string })).query;
    };
    expect((await login()).get("code")).toBeTruthy();
    // A new secret in clear replaces the stored one (the upstream refuses it), and the right one works again.
    const crossed = await mgmt("PATCH", `/connections/${shown?.id}`, { headers, body: { options: { ...shown?.options, client_secret: "a-new-secret" } } });
    expect(crossed.status).toBe(200);
    expect((await login()).get("error")).toBe("access_denied");
    const restored = await mgmt("PATCH", `/connections/${shown?.id}`, { headers, body: { options: { ...shown?.options, client_secret: UPSTREAM_SECRET } } });
    expect(restored.status).toBe(200);
    expect((await login()).get("code")).toBeTruthy();
  });

  it("the only connection of an application is a button; connection=<name> goes straight to the upstream", async () => {
    const [connection] = (await (await mgmt("GET", "/connections?name=acme-sso", { headers: { "tenant-id": tenant } })).json()) as { id: string }[];
    const only = await seedClient(tenant);
    const set = await mgmt("PATCH", `/clients/${only.client_id}/connections`, { headers: { "tenant-id": tenant }, body: [connection?.id] });
    expect(set.status).toBe(200);
    const browser = new TestBrowser(host);
    const login = await pendingLogin(tenant, only.client_id);
    const html = await (await browser.get(`/u2/login?state=${login.state}`)).text();
    expect(html).not.toContain('name="password"');
    expect(html).toContain(`href="/u2/enterprise?state=${login.state}&amp;connection=acme-sso"`);
    const named = await pendingLogin(tenant, only.client_id, { connection: "acme-sso" });
    const res = await browser.get(`/u2/login?state=${named.state}`);
    expect(locationOf(res)).toBe(`/u2/enterprise?state=${named.state}&connection=acme-sso`);

    // show_as_button: false (a top-level field, as the reference's) hides the button; connection= still works.
    const hidden = await mgmt("PATCH", `/connections/${connection?.id}`, { headers: { "tenant-id": tenant }, body: { show_as_button: false } });
    expect(hidden.status).toBe(200);
    expect(((await hidden.json()) as { show_as_button?: boolean }).show_as_button).toBe(false);
    const both = await seedClient(tenant);
    const plain = await pendingLogin(tenant, both.client_id);
    expect(await (await browser.get(`/u2/login?state=${plain.state}`)).text()).not.toContain("Continue with Acme SSO");
    const direct = await pendingLogin(tenant, both.client_id, { connection: "acme-sso" });
    expect(locationOf(await browser.get(`/u2/login?state=${direct.state}`))).toBe(`/u2/enterprise?state=${direct.state}&connection=acme-sso`);
  });

  it("under the tenant's MFA policy an enterprise login asks for the second factor before any session or code (issue 25 audit)", async () => {
    await setFactors(tenant, { otp: true });
    await setPolicy(tenant, ["all-applications"]);
    try {
      const { browser, upstream } = await toUpstream({ connection: "acme-sso" });
      const sub = `mfa-${crypto.randomUUID().slice(0, 8)}`;
      const res = await callback(browser, { code: upstreamCode(upstream, { sub, email: `${sub}@acme.example`, email_verified: true }), state: upstream.get("state") as string });
      expect(res.status, await res.clone().text()).toBe(302);
      expect(locationOf(res)).toMatch(/^\/u2\/mfa\?state=mfa_/);
      const state = new URL(locationOf(res), "http://x").searchParams.get("state") as string;
      // No factor yet: the app's enrollment, and skipping it (continue) leads back to it.
      expect(locationOf(await browser.follow(res))).toBe(`/u2/mfa/totp-enrollment?state=${state}`);
      const html = await (await browser.get(`/u2/mfa/totp-enrollment?state=${state}`)).text();
      const skipped = await browser.post(`/u2/mfa/continue?state=${state}`, { _csrf: /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "" });
      expect(locationOf(skipped)).toBe(`/u2/mfa/totp-enrollment?state=${state}`);
      expect(await tenantSql(tenant, "SELECT id FROM sessions WHERE user_id = ?", `oidc|acme-sso|${sub}`)).toEqual([]);
    } finally {
      await setPolicy(tenant, []);
    }
  });
});
