import { env } from "cloudflare:test";
import { createLocalJWKSet, decodeJwt, jwtVerify } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { halfHash } from "../../src/worker/oauth/tokens/claims";
import { hashSecret } from "../../src/worker/login/session";
import { openLoginState } from "../../src/worker/tenant/login-state";
import { CP, call, createTenant } from "../helpers/api";
import { authorize, pkce, redirectParams, seedClient, seedUser, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";

const CALLBACK = "https://app.example.com/callback";
let tenant: string;
let host: string;
let issuer: string;
let client: TestClient;
let user: { user_id: string; email: string | null };
let cookie: string;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  issuer = `http://${host}/`;
  client = await seedClient(tenant, { callbacks: [CALLBACK] });
  user = await seedUser(tenant, "Alice@Example.com");
  cookie = await sessionCookie(tenant, user.user_id, client.client_id);
});

const base = () => ({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid profile email", state: "st-1" });

async function codeFor(params: Record<string, string> = {}) {
  const res = await authorize({ ...base(), ...params }, { cookie, host });
  expect(res.status).toBe(302);
  const code = redirectParams(res).query.get("code");
  expect(code).toBeTruthy();
  return code as string;
}

const exchange = (code: string, extra: Record<string, string> = {}) =>
  tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret, ...extra }, {}, host);

describe("GET /authorize: errors before a redirect target is known are answered directly", () => {
  it("an unregistered redirect_uri is 400 `Invalid redirect URI - <uri>`", async () => {
    const res = await authorize({ ...base(), redirect_uri: "https://evil.example.com/cb" }, { host });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "invalid_request", error_description: "Invalid redirect URI - https://evil.example.com/cb" });
  });

  it("an unknown client is 400", async () => {
    const res = await authorize({ ...base(), client_id: "nobody" }, { host });
    expect(res.status).toBe(400);
  });

  it("is protected against framing", async () => {
    const res = await authorize(base(), { host });
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  });
});

describe("GET /authorize: errors go to the registered redirect_uri", () => {
  it("response_mode=query with a token-bearing type is unsupported_response_mode, delivered in the fragment", async () => {
    const res = await authorize({ ...base(), response_type: "id_token token", nonce: "n", response_mode: "query" }, { host });
    const { fragment, url } = redirectParams(res);
    expect(url.origin + url.pathname).toBe(CALLBACK);
    expect(fragment.get("error")).toBe("unsupported_response_mode");
    expect(fragment.get("state")).toBe("st-1");
  });

  it("an unknown response_type is unsupported_response_type", async () => {
    const res = await authorize({ ...base(), response_type: "magic" }, { host });
    expect(redirectParams(res).query.get("error")).toBe("unsupported_response_type");
  });

  it("prompt=none without a session is login_required, without UI", async () => {
    const res = await authorize({ ...base(), prompt: "none" }, { host });
    expect(res.status).toBe(302);
    expect(Object.fromEntries(redirectParams(res).query)).toMatchObject({ error: "login_required", state: "st-1" });
  });

  it("prompt=none for a third-party client with a session is consent_required", async () => {
    const third = await seedClient(tenant, { callbacks: [CALLBACK], is_first_party: false });
    const res = await authorize({ ...base(), client_id: third.client_id, prompt: "none" }, { host, cookie });
    expect(redirectParams(res).query.get("error")).toBe("consent_required");
  });

  it("a client whose grant_types excludes authorization_code is unauthorized_client", async () => {
    const m2m = await seedClient(tenant, { callbacks: [CALLBACK], grant_types: ["client_credentials"] });
    const res = await authorize({ ...base(), client_id: m2m.client_id }, { host });
    expect(redirectParams(res).query.get("error")).toBe("unauthorized_client");
  });

  it("public clients must use PKCE S256", async () => {
    const spa = await seedClient(tenant, { callbacks: [CALLBACK], token_endpoint_auth_method: "none" });
    const without = await authorize({ ...base(), client_id: spa.client_id }, { host });
    expect(redirectParams(without).query.get("error")).toBe("invalid_request");
    const { challenge } = await pkce();
    const plain = await authorize({ ...base(), client_id: spa.client_id, code_challenge: challenge, code_challenge_method: "plain" }, { host });
    expect(redirectParams(plain).query.get("error")).toBe("invalid_request");
    const s256 = await authorize({ ...base(), client_id: spa.client_id, code_challenge: challenge, code_challenge_method: "S256" }, { host });
    expect(redirectParams(s256).url.pathname).toBe("/u2/login");
  });

  it("an id_token response needs a nonce", async () => {
    const res = await authorize({ ...base(), response_type: "id_token" }, { host });
    expect(redirectParams(res).fragment.get("error")).toBe("invalid_request");
  });
});

describe("GET /authorize: login and SSO", () => {
  it("without a session the browser goes to the login page (signup with screen_hint=signup)", async () => {
    const login = redirectParams(await authorize(base(), { host }));
    expect(login.url.pathname).toBe("/u2/login");
    // Issue 31: the login session is sealed into the state, not stored; it opens to the request for this tenant.
    const state = login.query.get("state") as string;
    expect(state).toMatch(/^lss1\./);
    expect(await env.TENANT.getByName(tenant).logins().get(state)).toBeNull();
    const opened = await openLoginState(env.ENCRYPTION_KEY, tenant, state);
    expect(opened?.request).toMatchObject({ client_id: client.client_id, redirect_uri: CALLBACK, state: "st-1" });
    expect(redirectParams(await authorize({ ...base(), screen_hint: "signup" }, { host })).url.pathname).toBe("/u2/signup");
  });

  it("prompt=login and an exceeded max_age force the login page despite a session", async () => {
    expect(redirectParams(await authorize({ ...base(), prompt: "login" }, { host, cookie })).url.pathname).toBe("/u2/login");
    await new Promise((r) => setTimeout(r, 1100));
    expect(redirectParams(await authorize({ ...base(), max_age: "0" }, { host, cookie })).url.pathname).toBe("/u2/login");
  });

  it("a forged session cookie is ignored", async () => {
    const forged = `${cookie.split(".")[0]}.not-the-secret`;
    expect(redirectParams(await authorize(base(), { host, cookie: forged })).url.pathname).toBe("/u2/login");
  });

  it("response_mode=form_post answers with an auto-submitting form to the redirect_uri", async () => {
    const res = await authorize({ ...base(), response_mode: "form_post" }, { host, cookie });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain(`action="${CALLBACK}"`);
    expect(html).toMatch(/name="code" value="ac1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"/);
    expect(html).toContain('name="state" value="st-1"');
  });

  it("implicit id_token token delivers both in the fragment, with at_hash binding them", async () => {
    const res = await authorize({ ...base(), response_type: "token id_token", nonce: "n-1" }, { host, cookie });
    const { fragment } = redirectParams(res);
    const accessToken = fragment.get("access_token") as string;
    const claims = decodeJwt(fragment.get("id_token") as string);
    expect(claims).toMatchObject({ nonce: "n-1", aud: client.client_id, iss: issuer, sub: user.user_id });
    expect(claims.at_hash).toBe(await halfHash(accessToken));
  });

  it("a login ticket from /co/authenticate logs in without UI, once", async () => {
    const ticket = "ticket-abcdefghijklmnopqrstuvwxyz0123456789";
    await env.TENANT.getByName(tenant).tickets().create({ ticket_hash: await hashSecret(ticket), client_id: client.client_id, user_id: user.user_id, expires_at: Date.now() + 60_000 });
    const first = await authorize({ ...base(), login_ticket: ticket, scope: "openid read:things" }, { host });
    const code = redirectParams(first).query.get("code") as string;
    expect(code).toBeTruthy();
    const tokens = (await (await exchange(code)).json()) as { scope: string; id_token: string };
    expect(decodeJwt(tokens.id_token).sub).toBe(user.user_id);
    const again = await authorize({ ...base(), login_ticket: ticket }, { host });
    expect(redirectParams(again).query.get("error")).toBe("access_denied");
  });
});

describe("authorization_code at POST /oauth/token", () => {
  it("exchanges a code for access and ID tokens signed by the tenant key, with the OIDC claims", async () => {
    const code = await codeFor({ nonce: "nonce-9" });
    const res = await exchange(code);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, string>;
    expect(body.token_type).toBe("Bearer");
    expect(body.scope).toBe("openid profile email");
    const jwks = createLocalJWKSet((await (await call("/.well-known/jwks.json", { host })).json()) as never);
    const { payload: id } = await jwtVerify(body.id_token as string, jwks, { issuer, audience: client.client_id });
    expect(id).toMatchObject({ sub: user.user_id, nonce: "nonce-9", email: "alice@example.com", email_verified: true });
    expect(id.auth_time).toEqual(expect.any(Number));
    expect(id.sid).toMatch(/^ses_/);
    expect(id.at_hash).toBe(await halfHash(body.access_token as string));
    const { payload: at } = await jwtVerify(body.access_token as string, jwks, { issuer, audience: `${issuer}userinfo` });
    expect(at).toMatchObject({ sub: user.user_id, azp: client.client_id, tenant_id: tenant, scope: "openid profile email" });
  });

  it("a replayed code is invalid_grant (403 by default)", async () => {
    const code = await codeFor();
    expect((await exchange(code)).status).toBe(200);
    const replay = await exchange(code);
    expect(replay.status).toBe(403);
    expect(await replay.json()).toEqual({ error: "invalid_grant", error_description: "Authorization code has already been used" });
  });

  it("a mismatched redirect_uri or client is refused and the code stays redeemable", async () => {
    const code = await codeFor();
    const wrongUri = await exchange(code, { redirect_uri: "https://app.example.com/other" });
    expect(((await wrongUri.json()) as { error: string }).error).toBe("invalid_grant");
    const other = await seedClient(tenant, { callbacks: [CALLBACK] });
    const wrongClient = await exchange(code, { client_id: other.client_id, client_secret: other.client_secret });
    expect(wrongClient.status).toBe(403);
    expect((await exchange(code)).status).toBe(200);
  });

  it("PKCE: a wrong or missing verifier is refused, the right one succeeds", async () => {
    const { verifier, challenge } = await pkce();
    const code = await codeFor({ code_challenge: challenge, code_challenge_method: "S256" });
    expect((await exchange(code)).status).toBe(403);
    expect((await exchange(code, { code_verifier: (await pkce()).verifier })).status).toBe(403);
    expect((await exchange(code, { code_verifier: verifier })).status).toBe(200);
  });

  it("a public client redeems with PKCE and no secret; a secret from it is refused", async () => {
    const spa = await seedClient(tenant, { callbacks: [CALLBACK], token_endpoint_auth_method: "none" });
    const spaCookie = await sessionCookie(tenant, user.user_id, spa.client_id);
    const { verifier, challenge } = await pkce();
    const res = await authorize({ ...base(), client_id: spa.client_id, code_challenge: challenge, code_challenge_method: "S256" }, { host, cookie: spaCookie });
    const code = redirectParams(res).query.get("code") as string;
    const withSecret = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: spa.client_id, client_secret: "x", code_verifier: verifier }, {}, host);
    expect(withSecret.status).toBe(401);
    const ok = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: spa.client_id, code_verifier: verifier }, {}, host);
    expect(ok.status).toBe(200);
  });

  it("many parallel redemptions of one code: exactly one succeeds", async () => {
    const code = await codeFor();
    const results = await Promise.all(Array.from({ length: 25 }, () => exchange(code)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 403)).toHaveLength(24);
  });

  it("a client with oidc_conformant=false gets invalid_grant as 400", async () => {
    const legacy = await seedClient(tenant, { callbacks: [CALLBACK], oidc_conformant: false });
    const res = await tokenForm({ grant_type: "authorization_code", code: "nope", redirect_uri: CALLBACK, client_id: legacy.client_id, client_secret: legacy.client_secret }, {}, host);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("missing code or redirect_uri is invalid_request", async () => {
    const res = await tokenForm({ grant_type: "authorization_code", client_id: client.client_id, client_secret: client.client_secret }, {}, host);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_request");
  });

  it("codes are issued per tenant: another tenant's code is unknown here", async () => {
    const code = await codeFor();
    const apexClient = await seedClient(CP.tenantId, { callbacks: [CALLBACK] });
    const res = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: apexClient.client_id, client_secret: apexClient.client_secret });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: "invalid_grant", error_description: "Invalid authorization code" });
    // ... and it still works on its own tenant.
    expect((await exchange(code)).status).toBe(200);
  });
});
