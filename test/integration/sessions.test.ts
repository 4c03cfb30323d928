import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { call, createTenant, mgmt } from "../helpers/api";
import { authorize, redirectParams, seedClient, seedUser, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";
import { tenantManagementToken } from "../helpers/management";
import { expectRefusals, reachKit } from "../helpers/route-reach";

/** Sessions through the management API, and the revocation cascade to refresh tokens (SPEC §3.3, §4.2). */

const CALLBACK = "https://app.example.com/callback";
let tenant: string;
let host: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant, { callbacks: [CALLBACK], allowed_logout_urls: ["https://app.example.com/bye"] });
});

const admin = (method: string, path: string) => mgmt(method, path, { headers: { "tenant-id": tenant } });

/** A user with a live session (its id from the cookie) and a refresh token issued under it. */
async function loggedIn() {
  const user = await seedUser(tenant, `ses-${crypto.randomUUID().slice(0, 8)}@example.com`);
  const cookie = await sessionCookie(tenant, user.user_id, client.client_id);
  const sessionId = cookie.slice("gh_session=".length).split(".")[0] as string;
  const res = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access" }, { host, cookie });
  const code = redirectParams(res).query.get("code") as string;
  const tokens = (await (
    await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host)
  ).json()) as { refresh_token: string };
  return { user, cookie, sessionId, refreshToken: tokens.refresh_token };
}

const refresh = (token: string) =>
  tokenForm({ grant_type: "refresh_token", refresh_token: token, client_id: client.client_id, client_secret: client.client_secret }, {}, host);

describe("sessions API", () => {
  it("lists and reads live sessions without their secret", async () => {
    const a = await loggedIn();
    const one = await admin("GET", `/sessions/${a.sessionId}`);
    expect(one.status).toBe(200);
    const body = (await one.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ id: a.sessionId, user_id: a.user.user_id, clients: [{ client_id: client.client_id }] });
    expect(JSON.stringify(body)).not.toMatch(/secret/);
    const mine = (await (await admin("GET", `/users/${encodeURIComponent(a.user.user_id)}/sessions?take=10`)).json()) as { sessions: Array<{ id: string }>; next?: string };
    expect(mine.sessions.map((s) => s.id)).toEqual([a.sessionId]);
    expect(mine.next).toBeUndefined();
    const all = (await (await admin("GET", "/sessions?per_page=100")).json()) as Array<{ id: string }>;
    expect(all.map((s) => s.id)).toContain(a.sessionId);
    expect((await admin("GET", "/sessions/ses_nothing")).status).toBe(404);
    expect((await admin("GET", "/users/auth0%7Cnobody/sessions")).status).toBe(404);
  });

  it("DELETE /sessions/{id} ends the session and revokes the refresh tokens issued under it", async () => {
    const a = await loggedIn();
    const b = await loggedIn();
    expect((await admin("DELETE", `/sessions/${a.sessionId}`)).status).toBe(204);
    expect((await admin("GET", `/sessions/${a.sessionId}`)).status).toBe(404);
    const refused = await refresh(a.refreshToken);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error_description: string }).error_description).toBe("Refresh token has been revoked");
    // The session cookie no longer logs the browser in.
    const silent = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", prompt: "none" }, { host, cookie: a.cookie });
    expect(redirectParams(silent).query.get("error")).toBe("login_required");
    // Another user's session and tokens are untouched.
    expect((await refresh(b.refreshToken)).status).toBe(200);
    expect((await admin("DELETE", `/sessions/${a.sessionId}`)).status).toBe(404);
  });

  it("POST /sessions/{id}/revoke does the same and answers 202", async () => {
    const a = await loggedIn();
    expect((await admin("POST", `/sessions/${a.sessionId}/revoke`)).status).toBe(202);
    expect((await refresh(a.refreshToken)).status).toBe(403);
  });

  it("DELETE /users/{id}/sessions revokes every session of the user and their refresh tokens (202), and no one else's", async () => {
    const a = await loggedIn();
    // A second session of the same user, with its own refresh token.
    const again = await sessionCookie(tenant, a.user.user_id, client.client_id);
    const secondId = again.slice("gh_session=".length).split(".")[0] as string;
    const code = redirectParams(await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access" }, { host, cookie: again })).query.get("code") as string;
    const second = (await (await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host)).json()) as { refresh_token: string };
    const other = await loggedIn();
    const path = `/users/${encodeURIComponent(a.user.user_id)}/sessions`;
    expect((await admin("DELETE", path)).status).toBe(202);
    for (const id of [a.sessionId, secondId]) expect((await admin("GET", `/sessions/${id}`)).status).toBe(404);
    for (const token of [a.refreshToken, second.refresh_token]) expect((await refresh(token)).status).toBe(403);
    expect((await refresh(other.refreshToken)).status).toBe(200);
    expect((await admin("GET", `/sessions/${other.sessionId}`)).status).toBe(200);
    // Nothing left to end is still accepted; an unknown user is 404.
    expect((await admin("DELETE", path)).status).toBe(202);
    expect((await admin("DELETE", "/users/auth0%7Cnobody/sessions")).status).toBe(404);
    // Who can reach it: no token 401; lacking delete:sessions, another tenant's, an end user's, a revoked token 403.
    await expectRefusals(await reachKit(["delete:sessions"], tenant), "DELETE", path, "delete:sessions");
  });

  it("a code issued under a session revoked before its exchange mints nothing", async () => {
    const user = await seedUser(tenant, `ses-${crypto.randomUUID().slice(0, 8)}@example.com`);
    const cookie = await sessionCookie(tenant, user.user_id, client.client_id);
    const sessionId = cookie.slice("gh_session=".length).split(".")[0] as string;
    const code = redirectParams(await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access" }, { host, cookie })).query.get("code") as string;
    expect((await admin("DELETE", `/sessions/${sessionId}`)).status).toBe(204);
    const res = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("a session shows the device it was started from and last used from, and that its login used a password", async () => {
    const email = `dev-${crypto.randomUUID().slice(0, 8)}@example.com`;
    await seedUser(tenant, email);
    const params = { client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", state: "s" };
    const start = await call(`/authorize?${new URLSearchParams(params)}`, { host, redirect: "manual" });
    const page = await call(start.headers.get("location") as string, { host, redirect: "manual" });
    const html = await page.text();
    const csrfCookie = page.headers.getSetCookie().find((c) => c.startsWith("gh_csrf="))?.split(";")[0] ?? "";
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
    const done = await call(start.headers.get("location") as string, {
      host,
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: csrfCookie, "user-agent": "FirstBrowser/1.0", "cf-connecting-ip": "203.0.113.7" },
      body: new URLSearchParams({ _csrf: csrf, email, password: "p4ssw0rd!" }).toString(),
    });
    expect(done.status).toBe(302);
    const cookie = done.headers.getSetCookie().find((c) => c.startsWith("gh_session="))?.split(";")[0] as string;
    expect(cookie).toBeTruthy();
    const id = cookie.slice("gh_session=".length).split(".")[0] as string;
    const first = (await (await admin("GET", `/sessions/${id}`)).json()) as { device: Record<string, string>; authentication: { methods: Array<{ name: string }> } };
    expect(first.device).toEqual({ initial_ip: "203.0.113.7", initial_user_agent: "FirstBrowser/1.0", last_ip: "203.0.113.7", last_user_agent: "FirstBrowser/1.0" });
    expect(first.authentication.methods.map((m) => m.name)).toEqual(["pwd"]);
    // Single sign-on from another device moves only the last_* fields.
    const sso = await call(`/authorize?${new URLSearchParams(params)}`, { host, redirect: "manual", headers: { cookie, "user-agent": "Phone/2.0", "cf-connecting-ip": "198.51.100.9" } });
    expect(sso.status).toBe(302);
    const later = (await (await admin("GET", `/sessions/${id}`)).json()) as { device: Record<string, string> };
    expect(later.device).toEqual({ initial_ip: "203.0.113.7", initial_user_agent: "FirstBrowser/1.0", last_ip: "198.51.100.9", last_user_agent: "Phone/2.0" });
  });

  it("a code redeemed as its session is revoked starts no refresh family, whichever reaches the user object first", async () => {
    const user = await seedUser(tenant, `ses-${crypto.randomUUID().slice(0, 8)}@example.com`);
    const cookie = await sessionCookie(tenant, user.user_id, client.client_id);
    const sessionId = cookie.slice("gh_session=".length).split(".")[0] as string;
    const code = redirectParams(await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access" }, { host, cookie })).query.get("code") as string;
    // The race: the code was already redeemed in the tenant (so the revocation found no code to delete) and
    // the revocation's cascade reaches the user's object before the exchange issues its refresh token.
    expect(await env.USER.getByName(`${tenant}/${user.user_id}`).revokeRefreshTokens([sessionId])).toBe(0);
    const res = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
    expect(res.status).toBe(403);
    expect((await res.json()) as Record<string, unknown>).toMatchObject({ error: "invalid_grant", error_description: "The session of this authorization has ended" });
    const tokens = await admin("GET", `/users/${encodeURIComponent(user.user_id)}/refresh-tokens`);
    expect(await tokens.json()).toEqual([]);
    // Another session of the same user still gets its refresh token.
    const other = await sessionCookie(tenant, user.user_id, client.client_id);
    const code2 = redirectParams(await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access" }, { host, cookie: other })).query.get("code") as string;
    const ok = await tokenForm({ grant_type: "authorization_code", code: code2, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { refresh_token?: string }).refresh_token).toBeTruthy();
  });

  it("blocking's cascade reaching the user object before a redeemed code's issue leaves no family either", async () => {
    const user = await seedUser(tenant, `ses-${crypto.randomUUID().slice(0, 8)}@example.com`);
    const cookie = await sessionCookie(tenant, user.user_id, client.client_id);
    const sessionId = cookie.slice("gh_session=".length).split(".")[0] as string;
    const code = redirectParams(await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access" }, { host, cookie })).query.get("code") as string;
    // Blocking revokes every token and names the sessions it ended (the code was redeemed just before).
    await env.USER.getByName(`${tenant}/${user.user_id}`).revokeRefreshTokens(null, [sessionId]);
    const res = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
    expect(res.status).toBe(403);
    expect((await res.json()) as Record<string, unknown>).toMatchObject({ error: "invalid_grant", error_description: "The session of this authorization has ended" });
  });

  it("blocking a user names its ended sessions to the user object's cascade", async () => {
    const a = await loggedIn();
    expect((await mgmt("PATCH", `/users/${encodeURIComponent(a.user.user_id)}`, { headers: { "tenant-id": tenant }, body: { blocked: true } })).status).toBe(200);
    await expect
      .poll(() => runInDurableObject(env.USER.getByName(`${tenant}/${a.user.user_id}`), (_o, state) => state.storage.sql.exec("SELECT session_id FROM ended_sessions").toArray().map((r) => r.session_id)))
      .toEqual([a.sessionId]);
  });

  it("logout ends the session without touching refresh tokens (SPEC §3.3)", async () => {
    const a = await loggedIn();
    const res = await call(`/v2/logout?client_id=${client.client_id}&returnTo=${encodeURIComponent("https://app.example.com/bye")}`, {
      host,
      headers: { cookie: a.cookie },
      redirect: "manual",
    });
    expect(res.status).toBe(302);
    expect((await admin("GET", `/sessions/${a.sessionId}`)).status).toBe(404);
    expect((await refresh(a.refreshToken)).status).toBe(200);
  });

  it("who can reach them: no token 401, a token without the scope 403, another tenant's 403", async () => {
    expect((await call("/api/v2/sessions", { host })).status).toBe(401);
    const access_token = await tenantManagementToken(tenant, ["read:sessions"]);
    expect((await mgmt("GET", "/sessions", { token: access_token, host })).status).toBe(200);
    expect((await mgmt("DELETE", "/sessions/ses_x", { token: access_token, host })).status).toBe(403);
    const theirs = await tenantManagementToken(await createTenant(), ["read:sessions"]);
    expect((await mgmt("GET", "/sessions", { token: theirs, host })).status).toBe(403);
  });
});

describe("PATCH /sessions/{id}: session metadata", () => {
  const patch = (id: string, body: unknown) => mgmt("PATCH", `/sessions/${id}`, { headers: { "tenant-id": tenant }, body });
  const read = async (id: string) => (await (await admin("GET", `/sessions/${id}`)).json()) as Record<string, unknown>;

  it("a session has empty metadata until set; PATCH replaces it whole, every read shows it, null or {} clears it", async () => {
    const a = await loggedIn();
    expect((await read(a.sessionId)).session_metadata).toEqual({});

    const res = await patch(a.sessionId, { session_metadata: { device_name: "Work laptop", "terms-v2": "accepted" } });
    expect(res.status).toBe(200);
    const updated = (await res.json()) as Record<string, unknown>;
    expect(updated).toMatchObject({ id: a.sessionId, user_id: a.user.user_id, session_metadata: { device_name: "Work laptop", "terms-v2": "accepted" } });
    expect(JSON.stringify(updated)).not.toMatch(/secret/);
    expect((await read(a.sessionId)).session_metadata).toEqual({ device_name: "Work laptop", "terms-v2": "accepted" });
    const mine = (await (await admin("GET", `/users/${encodeURIComponent(a.user.user_id)}/sessions?take=10`)).json()) as { sessions: Array<Record<string, unknown>> };
    expect(mine.sessions[0]?.session_metadata).toEqual({ device_name: "Work laptop", "terms-v2": "accepted" });
    const all = (await (await admin("GET", "/sessions?per_page=100")).json()) as Array<Record<string, unknown>>;
    expect(all.find((s) => s.id === a.sessionId)?.session_metadata).toEqual({ device_name: "Work laptop", "terms-v2": "accepted" });

    // Replace, not merge.
    expect(((await (await patch(a.sessionId, { session_metadata: { only: "this" } })).json()) as Record<string, unknown>).session_metadata).toEqual({ only: "this" });
    expect((await read(a.sessionId)).session_metadata).toEqual({ only: "this" });
    // The documented limits are inclusive: 25 properties, 255-character keys and values.
    const full = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`${"k".repeat(250)}${String(i).padStart(5, "0")}`, "v".repeat(255)]));
    expect((await patch(a.sessionId, { session_metadata: full })).status).toBe(200);
    expect((await read(a.sessionId)).session_metadata).toEqual(full);

    for (const clear of [{}, null]) {
      await patch(a.sessionId, { session_metadata: { x: "y" } });
      const cleared = await patch(a.sessionId, { session_metadata: clear });
      expect(cleared.status).toBe(200);
      expect(((await cleared.json()) as Record<string, unknown>).session_metadata).toEqual({});
      expect((await read(a.sessionId)).session_metadata).toEqual({});
    }
  });

  it("refuses bodies the reference platform refuses with 400 (management error shape) and writes nothing", async () => {
    const a = await loggedIn();
    expect((await patch(a.sessionId, { session_metadata: { kept: "yes" } })).status).toBe(200);
    const bad: Array<[string, unknown]> = [
      ["26 properties", { session_metadata: Object.fromEntries(Array.from({ length: 26 }, (_, i) => [`k${i}`, "v"])) }],
      ["a key with a dot", { session_metadata: { "bad.key": "v" } }],
      ["a key with a space", { session_metadata: { "bad key": "v" } }],
      ["a key with a dollar", { session_metadata: { $bad: "v" } }],
      ["an empty key", { session_metadata: { "": "v" } }],
      ["a 256-character key", { session_metadata: { ["k".repeat(256)]: "v" } }],
      ["a 256-character value", { session_metadata: { k: "v".repeat(256) } }],
      ["a number value", { session_metadata: { k: 1 } }],
      ["a boolean value", { session_metadata: { k: true } }],
      ["a nested object value", { session_metadata: { k: { nested: "v" } } }],
      ["a null value", { session_metadata: { k: null } }],
      ["metadata as an array", { session_metadata: ["v"] }],
      ["metadata as a string", { session_metadata: "v" }],
      ["an unknown property", { session_metadata: { k: "v" }, device: { last_ip: "1.2.3.4" } }],
      ["only an unknown property", { expires_at: "2099-01-01T00:00:00.000Z" }],
      ["an empty body object", {}],
      ["a JSON array body", [{ session_metadata: {} }]],
      ["malformed JSON", '{"session_metadata": {'],
      ["a JSON string body", '"session_metadata"'],
      // A parsed record would silently drop it: refused instead of a quiet change.
      ["a __proto__ key", '{"session_metadata":{"__proto__":"x","a":"b"}}'],
    ];
    for (const [what, body] of bad) {
      const res = await patch(a.sessionId, body);
      expect(res.status, what).toBe(400);
      const error = (await res.json()) as Record<string, unknown>;
      expect(error, what).toMatchObject({ statusCode: 400, error: "Bad Request", errorCode: "invalid_body" });
      expect(typeof error.message, what).toBe("string");
    }
    // A body over the management API's byte limit is refused before it is read, in the same shape (413).
    const huge = await patch(a.sessionId, { session_metadata: { k: "v".repeat(200 * 1024) } });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ statusCode: 413, errorCode: "payload_too_large" });
    // Not JSON at all.
    const form = await call(`/api/v2/sessions/${a.sessionId}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${await tenantManagementToken(tenant, ["update:sessions"])}`, "content-type": "application/x-www-form-urlencoded" },
      host,
      body: "session_metadata=x",
    });
    expect(form.status).toBe(415);
    expect((await read(a.sessionId)).session_metadata).toEqual({ kept: "yes" });
  });

  it("a revoked, logged-out, expired or unknown session is 404, as GET answers", async () => {
    const revoked = await loggedIn();
    expect((await admin("DELETE", `/sessions/${revoked.sessionId}`)).status).toBe(204);
    const loggedOut = await loggedIn();
    await call(`/v2/logout?client_id=${client.client_id}`, { host, headers: { cookie: loggedOut.cookie }, redirect: "manual" });
    const user = await seedUser(tenant, `ses-${crypto.randomUUID().slice(0, 8)}@example.com`);
    const expired = (await sessionCookie(tenant, user.user_id, client.client_id, { expiresAt: Date.now() - 1000 })).slice("gh_session=".length).split(".")[0] as string;
    for (const id of [revoked.sessionId, loggedOut.sessionId, expired, "ses_nothing"]) {
      const res = await patch(id, { session_metadata: { k: "v" } });
      expect(res.status, id).toBe(404);
      expect(await res.json()).toMatchObject({ statusCode: 404, errorCode: "inexistent_session" });
      expect((await admin("GET", `/sessions/${id}`)).status, id).toBe(404);
    }
  });

  it("who can reach it: no token 401; lacking update:sessions, another tenant's, an end user's, a revoked token 403", async () => {
    const a = await loggedIn();
    const kit = await reachKit(["update:sessions"], tenant);
    await expectRefusals(kit, "PATCH", `/sessions/${a.sessionId}`, "update:sessions", { session_metadata: { k: "v" } });
    // read:sessions alone does not write.
    const reader = await tenantManagementToken(tenant, ["read:sessions"]);
    expect((await mgmt("PATCH", `/sessions/${a.sessionId}`, { token: reader, host, body: { session_metadata: { k: "v" } } })).status).toBe(403);
    expect((await read(a.sessionId)).session_metadata).toEqual({});
    const ok = await mgmt("PATCH", `/sessions/${a.sessionId}`, { token: kit.allowed, headers: { "tenant-id": tenant }, body: { session_metadata: { k: "v" } } });
    expect(ok.status).toBe(200);
  });

  it("records a session.updated event (sapi) in the tenant's logs", async () => {
    const a = await loggedIn();
    expect((await patch(a.sessionId, { session_metadata: { audited: "yes" } })).status).toBe(200);
    const { env, runDurableObjectAlarm } = await import("cloudflare:test");
    await runDurableObjectAlarm(env.TENANT.getByName(tenant));
    const logs = (await (await admin("GET", "/logs?per_page=100")).json()) as Array<Record<string, unknown>>;
    const entry = logs.find((l) => JSON.stringify(l).includes(a.sessionId) && JSON.stringify(l).includes("session.updated"));
    expect(entry?.type).toBe("sapi");
  });
});

describe("session revocation is audited", () => {
  it("records a session.deleted event (sapi) in the tenant's logs", async () => {
    const a = await loggedIn();
    expect((await admin("DELETE", `/sessions/${a.sessionId}`)).status).toBe(204);
    const { env, runDurableObjectAlarm } = await import("cloudflare:test");
    await runDurableObjectAlarm(env.TENANT.getByName(tenant));
    const logs = (await (await admin("GET", "/logs?per_page=100")).json()) as Array<{ type: string; details?: Record<string, unknown>; description?: string }>;
    const entry = logs.find((l) => JSON.stringify(l).includes(a.sessionId) && JSON.stringify(l).includes("session.deleted"));
    expect(entry?.type).toBe("sapi");
  });
});

describe("idle session lifetime (tenant idle_session_lifetime, the rule the login path applies)", () => {
  const HOUR = 3_600_000;
  let idleTenant: string;
  let idleHost: string;
  let idleClient: TestClient;
  const idleAdmin = (method: string, path: string) => mgmt(method, path, { headers: { "tenant-id": idleTenant } });
  const idOf = (cookie: string) => cookie.slice("gh_session=".length).split(".")[0] as string;

  beforeAll(async () => {
    idleTenant = await createTenant();
    idleHost = `${idleTenant}.localhost:8787`;
    idleClient = await seedClient(idleTenant, { callbacks: [CALLBACK] });
    const res = await mgmt("PATCH", "/tenants/settings", { headers: { "tenant-id": idleTenant }, body: { idle_session_lifetime: 2 } });
    expect(res.status).toBe(200);
  });
  afterEach(() => setClock());

  it("reports idle_expires_at as last interaction plus the idle lifetime, capped by expires_at", async () => {
    const user = await seedUser(idleTenant, `idle-${crypto.randomUUID().slice(0, 8)}@example.com`);
    const long = idOf(await sessionCookie(idleTenant, user.user_id, idleClient.client_id, { expiresAt: Date.now() + 10 * HOUR }));
    const short = idOf(await sessionCookie(idleTenant, user.user_id, idleClient.client_id, { expiresAt: Date.now() + HOUR }));
    const a = (await (await idleAdmin("GET", `/sessions/${long}`)).json()) as Record<string, string>;
    expect(a.idle_expires_at).toBe(new Date(Date.parse(a.last_interacted_at as string) + 2 * HOUR).toISOString());
    const b = (await (await idleAdmin("GET", `/sessions/${short}`)).json()) as Record<string, string>;
    expect(b.idle_expires_at).toBe(b.expires_at);
    const listed = (await (await idleAdmin("GET", `/users/${encodeURIComponent(user.user_id)}/sessions?take=10`)).json()) as { sessions: Array<Record<string, string>> };
    expect(listed.sessions.find((s) => s.id === long)?.idle_expires_at).toBe(a.idle_expires_at);
  });

  it("leaves a session unused for longer than the idle lifetime out of every read, as login does", async () => {
    const user = await seedUser(idleTenant, `idle-${crypto.randomUUID().slice(0, 8)}@example.com`);
    const start = Date.now();
    const idleCookie = await sessionCookie(idleTenant, user.user_id, idleClient.client_id, { expiresAt: start + 10 * HOUR });
    const idle = idOf(idleCookie);
    expect((await idleAdmin("GET", `/sessions/${idle}`)).status).toBe(200);

    const later = start + 2 * HOUR + 60_000;
    setClock(() => later + (Date.now() - start));
    const fresh = idOf(await sessionCookie(idleTenant, user.user_id, idleClient.client_id, { expiresAt: later + 10 * HOUR }));
    // Login already refuses the idle session...
    const silent = await authorize({ client_id: idleClient.client_id, redirect_uri: CALLBACK, response_type: "code", prompt: "none" }, { host: idleHost, cookie: idleCookie });
    expect(redirectParams(silent).query.get("error")).toBe("login_required");
    // ...and the management API no longer shows it, with totals and pages counting only live sessions.
    expect((await idleAdmin("GET", `/sessions/${idle}`)).status).toBe(404);
    const mine = (await (await idleAdmin("GET", `/users/${encodeURIComponent(user.user_id)}/sessions?take=10`)).json()) as { sessions: Array<{ id: string }> };
    expect(mine.sessions.map((s) => s.id)).toEqual([fresh]);
    const all = (await (await idleAdmin("GET", "/sessions?include_totals=true&per_page=50")).json()) as { sessions: Array<{ id: string }>; total: number };
    expect(all.sessions.map((s) => s.id)).toContain(fresh);
    expect(all.sessions.map((s) => s.id)).not.toContain(idle);
    expect(all.total).toBe(all.sessions.length);
  });
});
