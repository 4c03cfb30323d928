import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { CP, call, createTenant, mgmt } from "../helpers/api";
import { authorize, redirectParams, seedClient, type TestClient, tokenForm } from "../helpers/flows";
import { tenantManagementToken } from "../helpers/management";
import { mintWithTenantKey } from "../helpers/mint";

/**
 * Issue 6, critical finding: an end user who signs up and logs in must never obtain management scopes
 * through any user-facing grant, on a child tenant or on the control plane, and the management API must
 * hold any user-shaped token to the current-user rules whatever it carries.
 */

const CALLBACK = "https://app.example.com/callback";
const ORIGIN = "https://app.example.com";
const PASSWORD = "Sign-up-9-password!";
const MANAGEMENT = "urn:gatehouse:management";
const ASKED = "openid email read:clients read:client_keys create:clients update:clients create:tenants read:users read:current_user";

interface Realm {
  name: string;
  tenantId: () => string;
  host: () => string;
}

/** A self-service sign-up through the public endpoint, then a login ticket from /co/authenticate. */
async function signUpAndLogIn(host: string, client: TestClient, email: string): Promise<{ userId: string; cookie: string }> {
  const signup = await call("/dbconnections/signup", {
    method: "POST",
    host,
    headers: { "content-type": "application/json", origin: ORIGIN },
    body: JSON.stringify({ client_id: client.client_id, email, password: PASSWORD, connection: "Username-Password-Authentication" }),
  });
  expect(signup.status, await signup.clone().text()).toBe(200);
  const co = await call("/co/authenticate", {
    method: "POST",
    host,
    headers: { "content-type": "application/json", origin: ORIGIN },
    body: JSON.stringify({ client_id: client.client_id, username: email, password: PASSWORD, credential_type: "password" }),
  });
  expect(co.status).toBe(200);
  const { login_ticket } = (await co.json()) as { login_ticket: string };
  const first = await authorize(
    { client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", login_ticket },
    { host },
  );
  const session = first.headers.getSetCookie().find((c) => c.startsWith("gh_session=")) as string;
  expect(session).toBeTruthy();
  const code = redirectParams(first).query.get("code") as string;
  const tokens = await tokenForm(
    { grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret },
    {},
    host,
  );
  const userId = String(decodeJwt(((await tokens.json()) as { id_token: string }).id_token).sub);
  return { userId, cookie: session.split(";")[0] as string };
}

const scopesOf = (jwt: string) => String(decodeJwt(jwt).scope ?? "").split(" ").filter(Boolean).sort();

let child: string;
const realms: Realm[] = [
  { name: "a child tenant", tenantId: () => child, host: () => `${child}.localhost:8787` },
  { name: "the control plane", tenantId: () => CP.tenantId, host: () => "localhost:8787" },
];

beforeAll(async () => {
  child = await createTenant();
});

describe.each(realms)("on $name, a signed-up user asking /authorize for the management API", (realm) => {
  let client: TestClient;
  let user: { userId: string; cookie: string };
  const base = () => ({ client_id: client.client_id, redirect_uri: CALLBACK, audience: MANAGEMENT, scope: ASKED, state: "s" });

  beforeAll(async () => {
    client = await seedClient(realm.tenantId(), { callbacks: [CALLBACK], web_origins: [ORIGIN] });
    user = await signUpAndLogIn(realm.host(), client, `mallory-${crypto.randomUUID().slice(0, 6)}@example.com`);
  });

  const expectNoManagementReach = async (accessToken: string) => {
    expect(scopesOf(accessToken)).toEqual(["email", "openid", "read:current_user"]);
    for (const [method, path, body] of [
      ["GET", "/clients", undefined],
      ["POST", "/clients", { name: "pwned" }],
      ["POST", "/tenants", { id: `pwn-${crypto.randomUUID().slice(0, 6)}` }],
      ["GET", "/tenants", undefined],
    ] as const) {
      const res = await mgmt(method, path, { token: accessToken, body, host: realm.host() });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
  };

  it("gets only the current-user scope from the code flow, and the management API refuses the token", async () => {
    const res = await authorize({ ...base(), response_type: "code" }, { host: realm.host(), cookie: user.cookie });
    const code = redirectParams(res).query.get("code") as string;
    const out = await tokenForm(
      { grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret },
      {},
      realm.host(),
    );
    const body = (await out.json()) as { access_token: string; scope: string };
    expect(body.scope.split(" ").sort()).toEqual(["email", "openid", "read:current_user"]);
    await expectNoManagementReach(body.access_token);
  });

  it("gets only the current-user scope from the implicit and hybrid responses", async () => {
    for (const response_type of ["token", "id_token token", "code id_token token", "code token"]) {
      const res = await authorize({ ...base(), response_type, nonce: "n-1" }, { host: realm.host(), cookie: user.cookie });
      const fragment = redirectParams(res).fragment;
      const accessToken = fragment.get("access_token") as string;
      expect(accessToken, response_type).toBeTruthy();
      expect(fragment.get("scope")?.split(" ").sort()).toEqual(["email", "openid", "read:current_user"]);
      await expectNoManagementReach(accessToken);
    }
  });

  it("cannot widen the token through token exchange", async () => {
    const res = await authorize({ ...base(), response_type: "token" }, { host: realm.host(), cookie: user.cookie });
    const subject = redirectParams(res).fragment.get("access_token") as string;
    const exchange = (scope: string) =>
      tokenForm(
        {
          grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
          subject_token: subject,
          subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
          client_id: client.client_id,
          client_secret: client.client_secret,
          scope,
          audience: MANAGEMENT,
        },
        {},
        realm.host(),
      );
    const widened = await exchange("read:clients read:current_user");
    expect(widened.status).toBe(400);
    expect(((await widened.json()) as { error: string }).error).toBe("invalid_scope");
    const same = (await (await exchange("read:current_user openid")).json()) as { access_token: string };
    expect(scopesOf(same.access_token)).toEqual(["openid", "read:current_user"]);
    expect((await mgmt("GET", "/clients", { token: same.access_token, host: realm.host() })).status).toBe(403);
  });

  it("refuses a hand-signed token with the user's sub carrying every management scope", async () => {
    const tenantId = realm.tenantId();
    const issuer = tenantId === CP.tenantId ? CP.issuer : `http://${realm.host()}/`;
    const forged = await mintWithTenantKey(tenantId, {
      iss: issuer,
      aud: MANAGEMENT,
      sub: user.userId,
      gty: undefined,
      scope: "read:clients read:client_keys create:clients read:tenants create:tenants read:users",
    });
    for (const path of ["/clients", "/tenants", `/users/${encodeURIComponent(user.userId)}`]) {
      expect((await mgmt("GET", path, { token: forged, host: realm.host() })).status, path).toBe(403);
    }
    // A user-shaped token never acts on another tenant, not even one minted by the control plane.
    const other = await createTenant();
    expect((await mgmt("GET", "/clients", { token: forged, headers: { "tenant-id": other } })).status).toBe(403);
  });

  it("with read:current_user reads its own user and nobody else", async () => {
    const res = await authorize({ ...base(), response_type: "token" }, { host: realm.host(), cookie: user.cookie });
    const accessToken = redirectParams(res).fragment.get("access_token") as string;
    const own = await mgmt("GET", `/users/${encodeURIComponent(user.userId)}`, { token: accessToken, host: realm.host() });
    expect(own.status).toBe(200);
    expect(await own.json()).toMatchObject({ user_id: user.userId, identities: [{ provider: "auth0", connection: "Username-Password-Authentication" }] });
    const someoneElse = await signUpAndLogIn(realm.host(), client, `victim-${crypto.randomUUID().slice(0, 6)}@example.com`);
    const theirs = await mgmt("GET", `/users/${encodeURIComponent(someoneElse.userId)}`, { token: accessToken, host: realm.host() });
    expect(theirs.status).toBe(403);
  });
});

describe("management scopes reach a token only through a client grant", () => {
  it("a client with a grant on the management API gets exactly the granted scopes by client_credentials", async () => {
    const tenant = await createTenant();
    const host = `${tenant}.localhost:8787`;
    const client = await seedClient(tenant, { grant_types: ["client_credentials"] });
    const denied = await tokenForm({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience: MANAGEMENT }, {}, host);
    expect(denied.status).toBe(403);
    const grant = await mgmt("POST", "/client-grants", { headers: { "tenant-id": tenant }, body: { client_id: client.client_id, audience: MANAGEMENT, scope: ["read:clients"] } });
    expect(grant.status).toBe(201);
    const res = await tokenForm({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience: MANAGEMENT }, {}, host);
    const { access_token } = (await res.json()) as { access_token: string };
    expect(scopesOf(access_token)).toEqual(["read:clients"]);
    expect((await mgmt("GET", "/clients", { token: access_token, host })).status).toBe(200);
    expect((await mgmt("POST", "/clients", { token: access_token, host, body: { name: "x" } })).status).toBe(403);
  });
});

describe("who can reach GET /api/v2/users/{id}", () => {
  it("no token 401; another tenant's token 403; a revoked current-user token 403; a read:users client token 200", async () => {
    const tenant = await createTenant();
    const host = `${tenant}.localhost:8787`;
    const app = await seedClient(tenant, { callbacks: [CALLBACK], web_origins: [ORIGIN] });
    const user = await signUpAndLogIn(host, app, `reach-${crypto.randomUUID().slice(0, 6)}@example.com`);
    const path = `/users/${encodeURIComponent(user.userId)}`;
    expect((await call(`/api/v2${path}`, { host })).status).toBe(401);

    const foreign = await createTenant();
    const foreignToken = await tenantManagementToken(foreign, ["read:users"]);
    expect((await mgmt("GET", path, { token: foreignToken, host })).status).toBe(403);

    const res = await authorize(
      { client_id: app.client_id, redirect_uri: CALLBACK, audience: MANAGEMENT, scope: "openid read:current_user", response_type: "token" },
      { host, cookie: user.cookie },
    );
    const own = redirectParams(res).fragment.get("access_token") as string;
    expect((await mgmt("GET", path, { token: own, host })).status).toBe(200);
    await call("/oauth/revoke", {
      method: "POST",
      host,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: own, client_id: app.client_id, client_secret: app.client_secret }).toString(),
    });
    expect((await mgmt("GET", path, { token: own, host })).status).toBe(403);

    const admin = await mgmt("GET", path, { headers: { "tenant-id": tenant } });
    expect(admin.status).toBe(200);
    expect((await mgmt("GET", "/users/auth0%7Cnobody", { headers: { "tenant-id": tenant } })).status).toBe(404);
  });
});
