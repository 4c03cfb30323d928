import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant, mgmt } from "../helpers/api";
import { authorize, redirectParams, seedClient, seedUser, type TestClient, tokenForm } from "../helpers/flows";
import { tenantManagementToken } from "../helpers/management";

const CALLBACK = "https://app.example.com/callback";
const APP_ORIGIN = "https://app.example.com";
const PASSWORD = "correct-horse-9";
let tenant: string;
let host: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant, { callbacks: [CALLBACK], web_origins: [APP_ORIGIN] });
});

describe("POST /co/authenticate", () => {
  const co = (body: Record<string, string>, origin: string | null = APP_ORIGIN) =>
    call("/co/authenticate", {
      method: "POST",
      host,
      headers: { "content-type": "application/json", ...(origin ? { origin } : {}) },
      body: JSON.stringify({ client_id: client.client_id, credential_type: "http://auth0.com/oauth/grant-type/password-realm", ...body }),
    });

  it("answers a login ticket that /authorize redeems once, with CORS for the app's origin", async () => {
    const user = await seedUser(tenant, "co@example.com", PASSWORD);
    const res = await co({ username: "CO@example.com", password: PASSWORD, realm: "Username-Password-Authentication" });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(res.headers.get("access-control-allow-credentials")).toBe("true");
    expect(res.headers.get("vary")).toBe("Origin");
    const body = (await res.json()) as { login_ticket: string; co_verifier: string; co_id: string };
    expect(body.login_ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(body.co_verifier).toBeTruthy();
    expect(body.co_id).toBeTruthy();
    const params = { client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", login_ticket: body.login_ticket };
    const code = redirectParams(await authorize(params, { host })).query.get("code") as string;
    const tokens = await tokenForm(
      { grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret },
      {},
      host,
    );
    expect(decodeJwt(((await tokens.json()) as { id_token: string }).id_token).sub).toBe(user.user_id);
    expect(redirectParams(await authorize(params, { host })).query.get("error")).toBe("access_denied");
  });

  it("a user blocked between /co/authenticate and /authorize gets no session and no code (review of issue 25)", async () => {
    const email = `co-blocked-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const user = await seedUser(tenant, email, PASSWORD);
    const res = await co({ username: email, password: PASSWORD, realm: "Username-Password-Authentication" });
    expect(res.status).toBe(200);
    const { login_ticket } = (await res.json()) as { login_ticket: string };
    const blocked = await mgmt("PATCH", `/users/${encodeURIComponent(user.user_id)}`, { headers: { "tenant-id": tenant }, body: { blocked: true } });
    expect(blocked.status).toBe(200);
    const answer = redirectParams(await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", login_ticket }, { host })).query;
    expect(answer.get("code")).toBeNull();
    expect(answer.get("error")).toBe("access_denied");
  });

  it("a wrong password is 403 access_denied with the reference wording, and counts toward the lockout", async () => {
    await seedUser(tenant, "co-wrong@example.com", PASSWORD);
    const res = await co({ username: "co-wrong@example.com", password: "nope-nope-nope" });
    expect(res.status).toBe(403);
    expect(res.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(await res.json()).toEqual({ error: "access_denied", error_description: "Wrong email or password." });
    await co({ username: "co-wrong@example.com", password: "nope-nope-nope" });
    await co({ username: "co-wrong@example.com", password: "nope-nope-nope" });
    const locked = await co({ username: "co-wrong@example.com", password: PASSWORD });
    expect(locked.status).toBe(403);
    expect(((await locked.json()) as { error_description: string }).error_description).toMatch(/Too many failed login attempts/);
  });

  it("preflight: allowed for a tenant web origin, refused (204, no CORS headers) for others", async () => {
    const preflight = (origin: string) =>
      call("/co/authenticate", {
        method: "OPTIONS",
        host,
        headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type, auth0-client" },
      });
    const ok = await preflight(APP_ORIGIN);
    expect(ok.status).toBe(204);
    expect(ok.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(ok.headers.get("access-control-allow-credentials")).toBe("true");
    expect(ok.headers.get("access-control-allow-methods")).toBe("POST");
    expect(ok.headers.get("access-control-allow-headers")).toBe("content-type, auth0-client");
    expect(ok.headers.get("vary")).toBe("Origin");
    const evil = await preflight("https://evil.example.com");
    expect(evil.status).toBe(204);
    expect(evil.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("refuses a browser origin that is not the application's own, before checking the password", async () => {
    await seedUser(tenant, "co-origin@example.com", PASSWORD);
    await seedClient(tenant, { callbacks: [CALLBACK], web_origins: ["https://other-app.example.com"] });
    const res = await co({ username: "co-origin@example.com", password: PASSWORD }, "https://other-app.example.com");
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toBe("access_denied");
  });

  it("an origin in the application's allowed_origins (the reference's Allowed Origins (CORS)) may log in cross-origin too", async () => {
    const origin = "https://embedded.example.com";
    const token = await tenantManagementToken(tenant, ["create:clients", "read:clients", "update:clients"]);
    const create = (allowed_origins: unknown) =>
      call("/api/v2/clients", {
        method: "POST",
        host,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "embedded", callbacks: [CALLBACK], allowed_origins }),
      });
    // Entries are http(s) URLs compared by origin; "null", other schemes and wildcards are refused.
    for (const bad of [["null"], ["file:///tmp/x"], ["https://*.example.com"], ["not a url"], "https://x.example.com"]) {
      const refused = await create(bad);
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect(((await refused.json()) as { errorCode: string }).errorCode).toBe("invalid_body");
    }
    const created = await create([`${origin}/app?x=1#top`]);
    expect(created.status, await created.clone().text()).toBe(201);
    const app = (await created.json()) as { client_id: string; allowed_origins: string[]; web_origins: string[] };
    expect(app.allowed_origins).toEqual([`${origin}/app?x=1#top`]);
    expect(app.web_origins).toEqual([]);
    await seedUser(tenant, "co-embedded@example.com", PASSWORD);
    const login = (from: string) =>
      call("/co/authenticate", {
        method: "POST",
        host,
        headers: { "content-type": "application/json", origin: from },
        body: JSON.stringify({ client_id: app.client_id, credential_type: "password", username: "co-embedded@example.com", password: PASSWORD }),
      });
    const ok = await login(origin);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(origin);
    // Another application's web origin is still not this application's own.
    const other = await login(APP_ORIGIN);
    expect(other.status).toBe(403);
    expect(((await other.json()) as { error_description: string }).error_description).toMatch(/is not allowed for this application/);
  });

  it("missing parameters and unknown clients are invalid_request", async () => {
    expect((await co({ password: PASSWORD })).status).toBe(400);
    const unknown = await co({ client_id: "nobody", username: "a@b.c", password: PASSWORD });
    expect(((await unknown.json()) as { error: string }).error).toBe("invalid_request");
  });
});
