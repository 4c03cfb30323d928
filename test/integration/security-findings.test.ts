import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant, mgmt, token, uniqueId } from "../helpers/api";
import { authorize, redirectParams, seedClient, seedUser, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";

/** Issue 6, the seven smaller findings of the security review: one regression test (or more) each. */

const CALLBACK = "https://app.example.com/callback";
const MANAGEMENT = "urn:gatehouse:management";
let tenant: string;
let host: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant, {
    callbacks: [CALLBACK],
    allowed_logout_urls: ["https://app.example.com/bye", "https://app.example.com/*"],
    web_origins: ["https://app.example.com"],
  });
});

describe("finding 1: a revoked management token stops working at the management API", () => {
  it("answers 403 after /oauth/revoke, where it answered 200 before", async () => {
    const m2m = await seedClient(tenant, { grant_types: ["client_credentials"] });
    const grant = await mgmt("POST", "/client-grants", { headers: { "tenant-id": tenant }, body: { client_id: m2m.client_id, audience: MANAGEMENT, scope: ["read:clients"] } });
    expect(grant.status).toBe(201);
    // The revoking client must be the one the token was issued to, so this test keeps its own client.
    const issued = await tokenForm({ grant_type: "client_credentials", client_id: m2m.client_id, client_secret: m2m.client_secret, audience: MANAGEMENT }, {}, host);
    const { access_token } = (await issued.json()) as { access_token: string };
    expect((await mgmt("GET", "/clients", { token: access_token, host })).status).toBe(200);
    const revoked = await call("/oauth/revoke", {
      method: "POST",
      host,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: access_token, client_id: m2m.client_id, client_secret: m2m.client_secret }).toString(),
    });
    expect(revoked.status).toBe(200);
    const after = await mgmt("GET", "/clients", { token: access_token, host });
    expect(after.status).toBe(403);
    expect(((await after.json()) as { message: string }).message).toMatch(/revoked/);
  });
});

/** A JSON text nested `depth` levels deep: {"a":{"a":...}} or [[[...]]]. */
const nested = (depth: number, kind: "object" | "array") =>
  kind === "object" ? `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}` : `${"[".repeat(depth)}1${"]".repeat(depth)}`;

describe("finding 2: deeply nested JSON in free-form fields is a clear 400, never a 500", () => {
  it("refuses connection options 2,000 deep and client jwt_configuration 3,000 deep, writing nothing", async () => {
    const name = uniqueId("deep");
    const connection = `{"name":"${name}","strategy":"auth0","options":${nested(2000, "object")}}`;
    const res = await mgmt("POST", "/connections", { body: connection });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/nested deeper than 32/);
    const list = (await (await mgmt("GET", `/connections?name=${name}`)).json()) as unknown[];
    expect(list).toEqual([]);
    const clientBody = `{"name":"deep","jwt_configuration":{"scopes":${nested(3000, "array")}}}`;
    expect((await mgmt("POST", "/clients", { body: clientBody })).status).toBe(400);
  });

  it("refuses deep bodies on the Auth API too (token endpoint, sign-up)", async () => {
    const res = await call("/oauth/token", { method: "POST", host, headers: { "content-type": "application/json" }, body: `{"grant_type":${nested(5000, "array")}}` });
    expect(res.status).toBe(400);
    const signup = await call("/dbconnections/signup", {
      method: "POST",
      host,
      headers: { "content-type": "application/json" },
      body: `{"client_id":"${client.client_id}","email":"deep@example.com","password":"Abcdef-123!","connection":"Username-Password-Authentication","user_metadata":${nested(4000, "object")}}`,
    });
    expect(signup.status).toBe(400);
  });

  it("still accepts ordinary nesting", async () => {
    const res = await mgmt("POST", "/connections", { body: { name: uniqueId("ok"), strategy: "auth0", options: JSON.parse(nested(10, "object")) } });
    expect(res.status).toBe(201);
  });
});

describe("finding 3: logout redirects only to the registered URL string, never to raw input", () => {
  const logout = (returnTo: string) => call(`/v2/logout?client_id=${client.client_id}&returnTo=${returnTo}`, { host, redirect: "manual" });

  it("refuses control characters in returnTo with 400 instead of a 500 or a raw tab in Location", async () => {
    for (const bad of ["https://app.example.com/bye%0A", "https://app.example.com/bye%00", "https://app.example.com/b%09ye", "https://app.example.com/x%0D%0ASet-Cookie:%20a=b"]) {
      const res = await logout(bad);
      expect(res.status, bad).toBe(400);
      expect(res.headers.get("location")).toBeNull();
    }
  });

  it("redirects to exactly the registered string that matched", async () => {
    const exact = await logout(encodeURIComponent("https://app.example.com/bye"));
    expect(exact.status).toBe(302);
    expect(exact.headers.get("location")).toBe("https://app.example.com/bye");
    const wildcard = await logout(encodeURIComponent("https://app.example.com/later"));
    expect(wildcard.headers.get("location")).toBe("https://app.example.com/later");
    const sneaky = await logout(encodeURIComponent("https://evil.com@app.example.com/bye"));
    expect(sneaky.status).toBe(400);
  });

  it("applies the same rule to /oidc/logout", async () => {
    const res = await call(`/oidc/logout?client_id=${client.client_id}&post_logout_redirect_uri=https://app.example.com/bye%0A`, { host, redirect: "manual" });
    expect(res.status).toBe(400);
  });
});

describe("finding 4: tenant-dependent public documents name the headers that chose the tenant", () => {
  it("discovery and JWKS vary on Tenant-Id and X-Forwarded-Host; a header-chosen tenant is private", async () => {
    for (const path of ["/.well-known/openid-configuration", "/.well-known/jwks.json"]) {
      const byHost = await call(path, { host });
      expect(byHost.headers.get("vary")).toBe("Tenant-Id, X-Forwarded-Host");
      expect(byHost.headers.get("cache-control")).toMatch(/^public, /);
      const byHeader = await call(path, { headers: { "tenant-id": tenant } });
      expect(byHeader.headers.get("vary")).toBe("Tenant-Id, X-Forwarded-Host");
      expect(byHeader.headers.get("cache-control")).toMatch(/^private, /);
    }
  });
});

describe("finding 5: replaying a code revokes the access token its first redemption issued", () => {
  it("the first token works at /userinfo until the code is presented again", async () => {
    const user = await seedUser(tenant, `replay-${uniqueId()}@example.com`);
    const cookie = await sessionCookie(tenant, user.user_id, client.client_id);
    const res = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid" }, { host, cookie });
    const code = redirectParams(res).query.get("code") as string;
    const redeem = () =>
      tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
    const { access_token } = (await (await redeem()).json()) as { access_token: string };
    const userinfo = () => call("/userinfo", { host, headers: { authorization: `Bearer ${access_token}` } });
    expect((await userinfo()).status).toBe(200);
    const replay = await redeem();
    expect(replay.status).toBe(403);
    expect(((await replay.json()) as { error: string }).error).toBe("invalid_grant");
    expect((await userinfo()).status).toBe(401);
  });
});

describe("finding 6: /authorize refuses redirect URIs that only normalize to a registered one", () => {
  it.each([
    "https://evil.com@app.example.com/callback",
    "https:\\\\app.example.com\\callback",
    "https://app。example。com/callback",
    "https://app.example.com/x/../callback",
    "https://app.example.com/%2e%2e/callback",
    "https://app.example.com:443/callback",
    "https://app.example.com/callback\t",
  ])("%s is 400 Invalid redirect URI", async (redirect_uri) => {
    const res = await authorize({ client_id: client.client_id, redirect_uri, response_type: "code", scope: "openid" }, { host });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "invalid_request", error_description: `Invalid redirect URI - ${redirect_uri}` });
  });

  it("refuses a numeric-shorthand host for a loopback registration", async () => {
    const loopback = await seedClient(tenant, { callbacks: ["http://127.0.0.1:9999/cb"] });
    const ok = await authorize({ client_id: loopback.client_id, redirect_uri: "http://127.0.0.1:9999/cb", response_type: "code", scope: "openid" }, { host });
    expect(ok.status).toBe(302);
    const res = await authorize({ client_id: loopback.client_id, redirect_uri: "http://127.1:9999/cb", response_type: "code", scope: "openid" }, { host });
    expect(res.status).toBe(400);
  });
});

describe("finding 7: the lockout answers the same for unknown and real accounts", () => {
  const co = (username: string, password: string) =>
    call("/co/authenticate", {
      method: "POST",
      host,
      headers: { "content-type": "application/json", origin: "https://app.example.com" },
      body: JSON.stringify({ client_id: client.client_id, username, password, credential_type: "password" }),
    });
  const answers = async (email: string) => {
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) seen.push(((await (await co(email, "wrong-password-1")).json()) as { error_description: string }).error_description);
    return seen;
  };

  it("locks an unknown email after three failures exactly as it locks a real one", async () => {
    const real = `real-${uniqueId()}@example.com`;
    await seedUser(tenant, real, "right-password-1");
    const realAnswers = await answers(real);
    const unknownAnswers = await answers(`ghost-${uniqueId()}@example.com`);
    expect(unknownAnswers).toEqual(realAnswers);
    expect(realAnswers.slice(0, 2)).toEqual(["Wrong email or password.", "Wrong email or password."]);
    expect(realAnswers[3]).toMatch(/Too many failed login attempts/);
  });
});

describe("finding 8: confusable tenant ids", () => {
  it.each(["localhost", "xn--80ak6aa92e", "control-plane", "controlplane", "control--plane", "abc-", "a_b", "-abc"])("refuses %s", async (id) => {
    const res = await mgmt("POST", "/tenants", { body: { id } });
    expect(res.status).toBe(400);
  });

  it("the control plane does not answer as a subdomain with a second issuer", async () => {
    const res = await call("/.well-known/openid-configuration", { host: "control_plane.localhost:8787" });
    expect(res.status).toBe(404);
    const tokenRes = await token({ grant_type: "client_credentials", client_id: "x", client_secret: "y" }, { host: "control_plane.localhost:8787" });
    expect(tokenRes.status).toBe(404);
  });
});
