import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant, mgmt } from "../helpers/api";
import { authorize, redirectParams, seedClient, seedUser, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";

const CALLBACK = "https://app.example.com/callback";
let tenant: string;
let host: string;
let client: TestClient;
let userId: string;
let cookie: string;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant, { callbacks: [CALLBACK], allowed_logout_urls: ["https://app.example.com/bye"] });
  userId = (await seedUser(tenant, "bob@example.com")).user_id;
  cookie = await sessionCookie(tenant, userId, client.client_id);
});

async function tokens(scope = "openid profile email") {
  const res = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope }, { host, cookie });
  const code = redirectParams(res).query.get("code") as string;
  const out = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
  return (await out.json()) as { access_token: string; id_token: string; scope: string };
}

const userinfo = (token: string) => call("/userinfo", { host, headers: { authorization: `Bearer ${token}` } });

describe("GET /userinfo", () => {
  it("returns the user's claims for the token's scopes", async () => {
    const { access_token } = await tokens();
    const res = await userinfo(access_token);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ sub: userId, email: "bob@example.com", email_verified: true, nickname: "bob" });
    const narrow = await tokens("openid");
    expect(Object.keys((await (await userinfo(narrow.access_token)).json()) as object)).toEqual(["sub"]);
  });

  it("refuses a missing or invalid token with 401 and WWW-Authenticate", async () => {
    const missing = await call("/userinfo", { host });
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await userinfo("a.b.c")).status).toBe(401);
  });

  it("refuses a token issued by another tenant", async () => {
    const { access_token } = await tokens();
    expect((await call("/userinfo", { headers: { authorization: `Bearer ${access_token}` } })).status).toBe(401);
  });
});

describe("POST /oauth/revoke (RFC 7009)", () => {
  it("revokes an access token: userinfo then refuses it; unknown tokens are 200 too", async () => {
    const { access_token } = await tokens();
    expect((await userinfo(access_token)).status).toBe(200);
    const res = await call("/oauth/revoke", {
      method: "POST",
      host,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: access_token, client_id: client.client_id, client_secret: client.client_secret }).toString(),
    });
    expect(res.status).toBe(200);
    expect((await userinfo(access_token)).status).toBe(401);
    const unknown = await call("/oauth/revoke", {
      method: "POST",
      host,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: "whatever", client_id: client.client_id, client_secret: client.client_secret }).toString(),
    });
    expect(unknown.status).toBe(200);
  });

  it("requires client authentication and does not let another client revoke", async () => {
    const { access_token } = await tokens();
    const anon = await call("/oauth/revoke", { method: "POST", host, headers: { "content-type": "application/x-www-form-urlencoded" }, body: `token=${access_token}&client_id=${client.client_id}&client_secret=bad` });
    expect(anon.status).toBe(401);
    const other = await seedClient(tenant, { callbacks: [CALLBACK] });
    await call("/oauth/revoke", {
      method: "POST",
      host,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: access_token, client_id: other.client_id, client_secret: other.client_secret }).toString(),
    });
    expect((await userinfo(access_token)).status).toBe(200);
  });
});

describe("token exchange (RFC 8693)", () => {
  const exchange = (subject: string, extra: Record<string, string> = {}, who = client) =>
    tokenForm(
      {
        grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
        subject_token: subject,
        subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
        client_id: who.client_id,
        client_secret: who.client_secret,
        ...extra,
      },
      {},
      host,
    );

  it("downscopes a self-issued access token, never outliving it", async () => {
    const { access_token } = await tokens();
    const res = await exchange(access_token, { scope: "openid email" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { access_token: string; issued_token_type: string; scope: string };
    expect(body.issued_token_type).toBe("urn:ietf:params:oauth:token-type:access_token");
    expect(body.scope).toBe("openid email");
    const before = decodeJwt(access_token);
    const after = decodeJwt(body.access_token);
    expect(after.sub).toBe(before.sub);
    expect(after.exp).toBeLessThanOrEqual(before.exp as number);
    const info = (await (await userinfo(body.access_token)).json()) as Record<string, unknown>;
    expect(info.nickname).toBeUndefined();
    expect(info.email).toBe("bob@example.com");
  });

  it("cannot widen scopes, use another subject token type, or exchange another client's token", async () => {
    const narrow = await tokens("openid");
    const widen = await exchange(narrow.access_token, { scope: "openid email" });
    expect(((await widen.json()) as { error: string }).error).toBe("invalid_scope");
    const wrongType = await exchange(narrow.access_token, { subject_token_type: "urn:ietf:params:oauth:token-type:id_token" });
    expect(((await wrongType.json()) as { error: string }).error).toBe("invalid_request");
    const other = await seedClient(tenant, { callbacks: [CALLBACK] });
    const foreign = await exchange(narrow.access_token, {}, other);
    expect(((await foreign.json()) as { error: string }).error).toBe("invalid_grant");
  });
});

describe("logout", () => {
  it("/v2/logout ends the session and returns only to an allowed URL", async () => {
    const own = await sessionCookie(tenant, userId, client.client_id);
    const refused = await call(`/v2/logout?client_id=${client.client_id}&returnTo=${encodeURIComponent("https://evil.example/")}`, { host, headers: { cookie: own }, redirect: "manual" });
    expect(refused.status).toBe(400);
    const res = await call(`/v2/logout?client_id=${client.client_id}&returnTo=${encodeURIComponent("https://app.example.com/bye")}`, { host, headers: { cookie: own }, redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://app.example.com/bye");
    expect(res.headers.get("set-cookie")).toMatch(/gh_session=;/);
    const after = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", prompt: "none" }, { host, cookie: own });
    expect(redirectParams(after).query.get("error")).toBe("login_required");
  });

  it("/v2/logout without client_id returns to a URL in the tenant's Allowed Logout URLs, and only there", async () => {
    const own = await sessionCookie(tenant, userId, client.client_id);
    const logout = (returnTo: string) => call(`/v2/logout?returnTo=${encodeURIComponent(returnTo)}`, { host, headers: { cookie: own }, redirect: "manual" });
    const settings = { allowed_logout_urls: ["https://portal.example.com/signed-out", "https://*.tenant-wide.example.com/bye"] };
    expect((await mgmt("PATCH", "/tenants/settings", { headers: { "tenant-id": tenant }, body: settings })).status).toBe(200);
    // The client's own list does not count without client_id.
    expect((await logout("https://app.example.com/bye")).status).toBe(400);
    expect((await logout("https://evil.example/")).status).toBe(400);
    const res = await logout("https://portal.example.com/signed-out");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://portal.example.com/signed-out");
    expect(res.headers.get("set-cookie")).toMatch(/gh_session=;/);
    // Wildcards follow the client-level rules.
    expect((await logout("https://eu.tenant-wide.example.com/bye")).headers.get("location")).toBe("https://eu.tenant-wide.example.com/bye");
    expect((await logout("https://a.b.tenant-wide.example.com/bye")).status).toBe(400);
    const after = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", prompt: "none" }, { host, cookie: own });
    expect(redirectParams(after).query.get("error")).toBe("login_required");
  });

  it("/v2/logout with client_id and no returnTo goes to the client's first Allowed Logout URL", async () => {
    const own = await sessionCookie(tenant, userId, client.client_id);
    const res = await call(`/v2/logout?client_id=${client.client_id}`, { host, headers: { cookie: own }, redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://app.example.com/bye");
    expect(res.headers.get("set-cookie")).toMatch(/gh_session=;/);
    // A client without allowed logout URLs, and no client at all: our logged-out page.
    const bare = await seedClient(tenant, { callbacks: [CALLBACK] });
    expect((await call(`/v2/logout?client_id=${bare.client_id}`, { host, redirect: "manual" })).headers.get("location")).toBe("/u2/logged-out");
    expect((await call("/v2/logout", { host, redirect: "manual" })).headers.get("location")).toBe("/u2/logged-out");
  });

  it("/oidc/logout validates post_logout_redirect_uri against the id_token_hint's client and echoes state", async () => {
    const own = await sessionCookie(tenant, userId, client.client_id);
    const { id_token } = await tokens();
    const target = encodeURIComponent("https://app.example.com/bye");
    const res = await call(`/oidc/logout?id_token_hint=${id_token}&post_logout_redirect_uri=${target}&state=s1`, { host, headers: { cookie: own }, redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://app.example.com/bye?state=s1");
    const bad = await call(`/oidc/logout?id_token_hint=${id_token}&post_logout_redirect_uri=${encodeURIComponent("https://evil.example/")}`, { host, redirect: "manual" });
    expect(bad.status).toBe(400);
    const noHint = await call("/oidc/logout", { host, redirect: "manual" });
    expect(noHint.headers.get("location")).toBe("/u2/logged-out");
  });
});

describe("CORS", () => {
  it("token and revoke reflect any Origin, POST only, with the listed headers", async () => {
    const pre = await call("/oauth/token", { method: "OPTIONS", host, headers: { origin: "https://spa.example", "access-control-request-method": "POST" } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("https://spa.example");
    expect(pre.headers.get("access-control-allow-methods")).toBe("POST");
    expect(pre.headers.get("access-control-allow-headers")).toContain("Tenant-Id");
    const actual = await call("/oauth/revoke", { method: "POST", host, headers: { origin: "https://spa.example", "content-type": "application/x-www-form-urlencoded" }, body: "token=x" });
    expect(actual.headers.get("access-control-allow-origin")).toBe("https://spa.example");
  });

  it("management API: web_origins of the tenant's apps are allowed, others get a bare 204 preflight; Vary once", async () => {
    await seedClient(tenant, { web_origins: ["https://admin.example"] });
    const ok = await call("/api/v2/tenants", { method: "OPTIONS", host, headers: { origin: "https://admin.example", "access-control-request-method": "GET" } });
    expect(ok.status).toBe(204);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://admin.example");
    expect(ok.headers.get("vary")).toBe("Origin");
    const no = await call("/api/v2/tenants", { method: "OPTIONS", host, headers: { origin: "https://evil.example", "access-control-request-method": "GET" } });
    expect(no.status).toBe(204);
    expect(no.headers.get("access-control-allow-origin")).toBeNull();
    const actual = await call("/api/v2/tenants", { host, headers: { origin: "https://admin.example" } });
    expect(actual.status).toBe(401);
    expect(actual.headers.get("access-control-allow-origin")).toBe("https://admin.example");
    expect(actual.headers.get("vary")).toBe("Origin");
  });
});

describe("discovery lists what is implemented", () => {
  it("endpoints, grants, response types and modes, auth methods", async () => {
    const doc = (await (await call("/.well-known/openid-configuration", { host })).json()) as Record<string, unknown>;
    expect(doc).toMatchObject({
      issuer: `http://${host}/`,
      authorization_endpoint: `http://${host}/authorize`,
      userinfo_endpoint: `http://${host}/userinfo`,
      revocation_endpoint: `http://${host}/oauth/revoke`,
      end_session_endpoint: `http://${host}/oidc/logout`,
    });
    expect(doc.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "client_credentials", "urn:ietf:params:oauth:grant-type:token-exchange"]));
    expect(doc.response_modes_supported).toEqual(["query", "fragment", "form_post", "web_message"]);
    expect(doc.token_endpoint_auth_methods_supported).toEqual(expect.arrayContaining(["private_key_jwt", "client_secret_jwt"]));
    expect(doc.code_challenge_methods_supported).toContain("S256");
  });
});
