import { env, runInDurableObject } from "cloudflare:test";
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from "jose";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { audited } from "../../src/objects/tenant/core/events";
import type { TenantObject } from "../../src/objects/tenant/tenant-object";
import { getUser } from "../../src/objects/tenant/users/users";
import type { UserObject } from "../../src/objects/user/user-object";
import { fail, ok } from "../../src/shared/errors";
import { call, createTenant, mgmt, uniqueId } from "../helpers/api";
import { authorize, pendingLogin, redirectParams, seedClient, seedUser, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";
import { deliveries, fireAlarm, hookUrl, injectClock, outboxRows, relay } from "../helpers/outbox";

/**
 * Revocation cascades through the outbox (SPEC §3.3, issue 10 point 5) and OIDC Back-Channel Logout 1.0:
 * session revocation, blocking, logout; retries and dead letters of the internal destinations.
 */

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "correct-horse-9";
const BCL_EVENT = "http://schemas.openid.net/event/backchannel-logout";
const WEEK_MS = 7 * 86_400_000;

let tenant: string;
let host: string;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
});

const admin = (method: string, path: string, body?: unknown, tenantId = tenant) =>
  mgmt(method, path, { headers: { "tenant-id": tenantId }, ...(body === undefined ? {} : { body }) });

/** A client (refresh grant allowed) whose back-channel logout URI is a fresh receiver name, if `receiver` is given. */
async function app(receiver?: string, oidcLogout: Record<string, unknown> = {}, tenantId = tenant) {
  const client = await seedClient(tenantId, { callbacks: [CALLBACK], allowed_logout_urls: ["https://app.example.com/bye"] });
  if (receiver) {
    const res = await admin("PATCH", `/clients/${client.client_id}`, { oidc_logout: { backchannel_logout_urls: [hookUrl(receiver)], ...oidcLogout } }, tenantId);
    expect(res.status, await res.clone().text()).toBe(200);
  }
  return client;
}

/** A real password login at /u2/login: the session cookie (its id), and the code it answered. */
async function passwordLogin(client: TestClient, email: string) {
  const pending = await pendingLogin(tenant, client.client_id, { redirect_uri: CALLBACK, scope: "openid offline_access" });
  const res = await call(`/u2/login?state=${pending.state}`, {
    method: "POST",
    host,
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: pending.cookie },
    body: new URLSearchParams({ _csrf: pending.csrf, email, password: PASSWORD }).toString(),
  });
  expect(res.status).toBe(302);
  const cookie = (res.headers.get("set-cookie") ?? "").match(/gh_session=([^;]+)/)?.[0] as string;
  return { cookie, sessionId: cookie.slice("gh_session=".length).split(".")[0] as string, code: redirectParams(res).query.get("code") as string };
}

/** Exchanges a code: the ID token and the refresh token. */
async function exchange(client: TestClient, code: string, tenantHost = host) {
  const res = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, tenantHost);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as { id_token: string; refresh_token: string };
}

/** SSO: the session's cookie gets `client` a code, and so the client joins the session. */
async function ssoTokens(client: TestClient, cookie: string, tenantHost = host) {
  const res = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access" }, { host: tenantHost, cookie });
  return exchange(client, redirectParams(res).query.get("code") as string, tenantHost);
}

const refresh = (client: TestClient, token: string, tenantHost = host) =>
  tokenForm({ grant_type: "refresh_token", refresh_token: token, client_id: client.client_id, client_secret: client.client_secret }, {}, tenantHost);

async function expectRevoked(client: TestClient, token: string, tenantHost = host) {
  const res = await refresh(client, token, tenantHost);
  expect(res.status).toBe(403);
  expect(((await res.json()) as { error_description: string }).error_description).toBe("Refresh token has been revoked");
}

/** The logout tokens a receiver got. */
async function logoutTokens(name: string): Promise<string[]> {
  return (await deliveries(name)).map((d) => (d as unknown as { form: { logout_token: string } | null }).form?.logout_token as string);
}

/**
 * Runs the relay until `name` received a logout token: the object's own alarm may hold the notice's claim when
 * one of the test's relay passes runs (the delivery then arrives a moment later).
 */
async function relayUntilNotified(name: string): Promise<void> {
  await vi.waitFor(
    async () => {
      await relay(tenant);
      expect(await logoutTokens(name)).not.toEqual([]);
    },
    { timeout: 15_000, interval: 250 },
  );
}

/** Verifies a logout token against the tenant's published JWKS, as an RP does (OIDC Back-Channel Logout 1.0 §2.6). */
async function verifyLogoutToken(token: string, client: TestClient, issuer: string, at?: number) {
  const jwks = (await (await call("/.well-known/jwks.json", { host })).json()) as JSONWebKeySet;
  const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks), {
    issuer,
    audience: client.client_id,
    typ: "logout+jwt",
    ...(at ? { currentDate: new Date(at) } : {}),
  });
  return { payload, protectedHeader };
}

/** The test-only stand-in for the users route's contract: a `user.updated` (or `user.deleted`) write recorded with `audited`. */
async function recordUserWrite(userId: string, write: { blocked?: boolean; failed?: boolean; action?: "updated" | "deleted" }, tenantId = tenant) {
  await runInDurableObject(env.TENANT.getByName(tenantId), (o: TenantObject) => {
    o.outbox.commit((tx) => {
      const before = getUser(tx.sql, userId);
      if (!write.failed && write.blocked !== undefined) tx.sql.run`UPDATE users SET blocked = ${write.blocked} WHERE user_id = ${userId}`;
      if (!write.failed && write.action === "deleted") tx.sql.run`DELETE FROM users WHERE user_id = ${userId}`;
      const after = getUser(tx.sql, userId);
      const result = write.failed ? fail("inexistent_user") : ok(after);
      const actor = { actor: { type: "client" as const, id: "mgmt", client_id: "mgmt" } };
      audited(tx, actor, result, { entity: "user", action: write.action ?? "updated", id: userId, before, after: (value) => value });
    });
  });
}

describe("discovery and client settings (OIDC Back-Channel Logout 1.0 §2.1-2.2)", () => {
  it("discovery advertises back-channel logout with session ids", async () => {
    const doc = (await (await call("/.well-known/openid-configuration", { host })).json()) as Record<string, unknown>;
    expect(doc).toMatchObject({ backchannel_logout_supported: true, backchannel_logout_session_supported: true });
  });

  it("clients keep oidc_logout (and the older oidc_backchannel_logout) in the reference shape", async () => {
    const client = await app();
    const settings = { backchannel_logout_urls: ["https://rp.example.com/bcl"], backchannel_logout_initiators: { mode: "custom", selected_initiators: ["rp-logout", "session-revoked"] } };
    const res = await admin("PATCH", `/clients/${client.client_id}`, { oidc_logout: settings });
    expect(res.status).toBe(200);
    expect((await res.json()) as Record<string, unknown>).toMatchObject({ oidc_logout: settings });
    const legacy = await admin("POST", "/clients", { name: "Legacy", oidc_backchannel_logout: { backchannel_logout_urls: ["https://rp.example.com/old"] } });
    expect(legacy.status).toBe(201);
    expect((await legacy.json()) as Record<string, unknown>).toMatchObject({ oidc_backchannel_logout: { backchannel_logout_urls: ["https://rp.example.com/old"] } });
    const cleared = await admin("PATCH", `/clients/${client.client_id}`, { oidc_logout: null });
    expect((await cleared.json()) as Record<string, unknown>).not.toHaveProperty("oidc_logout");
  });

  it("refuses a non-https URI, a fragment, two URIs, an unknown initiator and custom mode without initiators (400)", async () => {
    const client = await app();
    const bad = [
      { backchannel_logout_urls: ["http://rp.example.com/bcl"] },
      { backchannel_logout_urls: ["https://rp.example.com/bcl#x"] },
      { backchannel_logout_urls: ["https://a.example.com/", "https://b.example.com/"] },
      { backchannel_logout_urls: ["https://rp.example.com/"], backchannel_logout_initiators: { mode: "custom", selected_initiators: ["coffee-spilled"] } },
      { backchannel_logout_urls: ["https://rp.example.com/"], backchannel_logout_initiators: { mode: "custom" } },
      { backchannel_logout_urls: ["https://rp.example.com/"], surprise: true },
    ];
    for (const oidc_logout of bad) {
      const res = await admin("PATCH", `/clients/${client.client_id}`, { oidc_logout });
      expect(res.status, JSON.stringify(oidc_logout)).toBe(400);
      expect((await res.json()) as Record<string, unknown>).toMatchObject({ statusCode: 400 });
    }
  });
});

describe("session revocation cascades through the outbox (SPEC §3.3)", () => {
  it("DELETE /sessions/{id} revokes the session's refresh tokens and POSTs a verifiable logout token to each participating client that registered a URI", async () => {
    const [a, b] = [uniqueId("bcl-a"), uniqueId("bcl-b")];
    const inSession = await app(a);
    const elsewhere = await app(b);
    const quiet = await app();
    const email = `${uniqueId("u")}@example.com`;
    const user = await seedUser(tenant, email, PASSWORD);
    const login = await passwordLogin(inSession, email);
    const first = await exchange(inSession, login.code);
    const second = await ssoTokens(quiet, login.cookie);
    // The other client has its own session; it never took part in this one.
    const other = await sessionCookie(tenant, user.user_id, elsewhere.client_id, { issuer: `http://${host}/` });
    const otherTokens = await ssoTokens(elsewhere, other);

    expect((await admin("DELETE", `/sessions/${login.sessionId}`)).status).toBe(204);
    // The best-effort call already revoked the session's tokens; the other session's survive.
    await expectRevoked(inSession, first.refresh_token);
    await expectRevoked(quiet, second.refresh_token);
    expect((await refresh(elsewhere, otherTokens.refresh_token)).status).toBe(200);

    const revocations = (await outboxRows(tenant, "internal.refresh_revocation")).filter((r) => r.payload.includes(login.sessionId));
    expect(revocations.map((r) => JSON.parse(r.payload))).toEqual([{ user_id: user.user_id, session_ids: [login.sessionId], reason: "session-revoked" }]);
    const notices = (await outboxRows(tenant, "internal.backchannel_logout")).filter((r) => r.payload.includes(login.sessionId));
    expect(notices.map((r) => JSON.parse(r.payload).client_id)).toEqual([inSession.client_id]);

    // The object's own alarm may hold the notice's claim when the test's relay pass runs: wait for the delivery.
    await vi.waitFor(
      async () => {
        await relay(tenant);
        expect((await outboxRows(tenant, "internal.backchannel_logout")).find((r) => r.id === notices[0]?.id)?.processed_at).toEqual(expect.any(Number));
      },
      { timeout: 15_000, interval: 250 },
    );
    const [delivery] = await deliveries(a);
    expect((delivery as unknown as { contentType: string }).contentType).toMatch(/^application\/x-www-form-urlencoded/);
    const tokens = await logoutTokens(a);
    expect(tokens).toHaveLength(1);
    expect(await deliveries(b)).toEqual([]);

    const idToken = decodeJwt(first.id_token);
    const { payload, protectedHeader } = await verifyLogoutToken(tokens[0] as string, inSession, idToken.iss as string);
    expect(idToken.iss).toBe(`http://${host}/`);
    expect(protectedHeader.typ).toBe("logout+jwt");
    expect(protectedHeader.kid).toBe(decodeProtectedHeader(first.id_token).kid);
    expect(payload).toMatchObject({ sub: user.user_id, sid: idToken.sid, aud: inSession.client_id, events: { [BCL_EVENT]: {} } });
    expect(payload.sid).toBe(login.sessionId);
    expect(payload).not.toHaveProperty("nonce");
    expect(typeof payload.jti).toBe("string");
    expect((payload.exp as number) - (payload.iat as number)).toBe(120);
    // Internal events are effects, not audit: no log row of their own.
    const logs = (await (await admin("GET", "/logs?per_page=100")).json()) as Array<{ details: { event_type: string } }>;
    expect(logs.some((l) => l.details.event_type.startsWith("internal."))).toBe(false);
  });

  it("POST /sessions/{id}/revoke notifies too; a client whose custom initiators omit session-revoked is not notified", async () => {
    const [all, picky] = [uniqueId("bcl-all"), uniqueId("bcl-picky")];
    const notified = await app(all, { backchannel_logout_initiators: { mode: "all" } });
    const skipped = await app(picky, { backchannel_logout_initiators: { mode: "custom", selected_initiators: ["password-changed"] } });
    const user = await seedUser(tenant, `${uniqueId("u")}@example.com`);
    const cookie = await sessionCookie(tenant, user.user_id, notified.client_id, { issuer: `http://${host}/` });
    await ssoTokens(skipped, cookie);
    const sessionId = cookie.slice("gh_session=".length).split(".")[0] as string;
    expect((await admin("POST", `/sessions/${sessionId}/revoke`)).status).toBe(202);
    await relayUntilNotified(all);
    expect(await logoutTokens(all)).toHaveLength(1);
    expect(await deliveries(picky)).toEqual([]);
  });

  it("the logout endpoint notifies the session's clients (rp-logout, always selected) but leaves refresh tokens alive", async () => {
    const name = uniqueId("bcl-rp");
    const client = await app(name, { backchannel_logout_initiators: { mode: "custom", selected_initiators: [] } });
    const email = `${uniqueId("u")}@example.com`;
    await seedUser(tenant, email, PASSWORD);
    const login = await passwordLogin(client, email);
    const tokens = await exchange(client, login.code);
    const res = await call(`/v2/logout?client_id=${client.client_id}&returnTo=${encodeURIComponent("https://app.example.com/bye")}`, {
      host,
      headers: { cookie: login.cookie },
      redirect: "manual",
    });
    expect(res.status).toBe(302);
    expect(await outboxRows(tenant, "internal.refresh_revocation").then((rows) => rows.filter((r) => r.payload.includes(login.sessionId)))).toEqual([]);
    await relayUntilNotified(name);
    const [token] = await logoutTokens(name);
    const { payload } = await verifyLogoutToken(token as string, client, `http://${host}/`);
    expect(payload.sid).toBe(login.sessionId);
    expect((await refresh(client, tokens.refresh_token)).status).toBe(200);
  });
});

describe("cascade failures are retried with the relay's backoff (SPEC §3.2)", () => {
  let restore: (() => void) | undefined;
  afterEach(() => {
    restore?.();
    restore = undefined;
  });

  it("a failing user-object call leaves the tokens to the outbox, which revokes them once the object answers", async () => {
    const tenantId = await createTenant();
    const tenantHost = `${tenantId}.localhost:8787`;
    const client = await seedClient(tenantId, { callbacks: [CALLBACK] });
    const user = await seedUser(tenantId, `${uniqueId("u")}@example.com`);
    const cookie = await sessionCookie(tenantId, user.user_id, client.client_id, { expiresAt: Date.now() + WEEK_MS });
    const sessionId = cookie.slice("gh_session=".length).split(".")[0] as string;
    const tokens = await ssoTokens(client, cookie, tenantHost);
    // From here the relay runs on the injected clock only (codes are minted on real time, so after them).
    const clock = await injectClock(tenantId);
    // The user's object refuses refresh-token revocations (both the worker's call and the relay's).
    const userStub = env.USER.getByName(`${tenantId}/${user.user_id}`);
    await runInDurableObject(userStub, (o: UserObject) => {
      const proto = Object.getPrototypeOf(o.refreshTokens()) as Record<"revokeBySessions" | "revokeAll", (...args: unknown[]) => unknown>;
      const original = { revokeBySessions: proto.revokeBySessions, revokeAll: proto.revokeAll };
      const unavailable = () => {
        throw new Error("user object unavailable");
      };
      proto.revokeBySessions = unavailable;
      proto.revokeAll = unavailable;
      restore = () => Object.assign(proto, original);
    });
    expect((await admin("DELETE", `/sessions/${sessionId}`, undefined, tenantId)).status).toBe(204);
    await fireAlarm(tenantId);
    let [row] = (await outboxRows(tenantId, "internal.refresh_revocation")) ?? [];
    expect(row).toMatchObject({ retry_count: 1, processed_at: null });
    expect(row?.error).toContain("refresh_revocation");
    expect(row?.error).toContain("user object unavailable");
    expect(row?.next_retry_at).toBe(clock.now + 750);

    restore?.();
    restore = undefined;
    clock.now += 750;
    await fireAlarm(tenantId);
    [row] = await outboxRows(tenantId, "internal.refresh_revocation");
    expect(row?.processed_at).toBe(clock.now);
    await expectRevoked(client, tokens.refresh_token, tenantHost);
  });

  it("an unreachable back-channel URI is retried with backoff, then dead-lettered and listed in failed events; a flaky one succeeds on a retry", async () => {
    const tenantId = await createTenant();
    const tenantHost = `${tenantId}.localhost:8787`;
    const [dead, flaky] = [uniqueId("bcl-dead"), uniqueId("bcl-flaky")];
    const deadClient = await seedClient(tenantId, { callbacks: [CALLBACK] });
    const flakyClient = await seedClient(tenantId, { callbacks: [CALLBACK] });
    for (const [client, url] of [[deadClient, hookUrl(dead, "fail=1000&status=503")], [flakyClient, hookUrl(flaky, "fail=2&status=400")]] as const) {
      const res = await admin("PATCH", `/clients/${client.client_id}`, { oidc_logout: { backchannel_logout_urls: [url] } }, tenantId);
      expect(res.status).toBe(200);
    }
    const user = await seedUser(tenantId, `${uniqueId("u")}@example.com`);
    const cookie = await sessionCookie(tenantId, user.user_id, deadClient.client_id, { expiresAt: Date.now() + WEEK_MS });
    await ssoTokens(flakyClient, cookie, tenantHost);
    const clock = await injectClock(tenantId);
    const sessionId = cookie.slice("gh_session=".length).split(".")[0] as string;
    expect((await admin("DELETE", `/sessions/${sessionId}`, undefined, tenantId)).status).toBe(204);

    const rowFor = async (clientId: string) => (await outboxRows(tenantId, "internal.backchannel_logout")).find((r) => r.payload.includes(clientId));
    for (let i = 0; i < 10; i++) {
      await fireAlarm(tenantId);
      const rows = await outboxRows(tenantId, "internal.backchannel_logout");
      if (rows.every((r) => r.processed_at !== null)) break;
      clock.now = Math.max(clock.now, ...rows.filter((r) => r.processed_at === null).map((r) => r.next_retry_at));
    }
    const flakyRow = await rowFor(flakyClient.client_id);
    expect(flakyRow).toMatchObject({ retry_count: 2, dead_lettered_at: null, processed_at: expect.any(Number) });
    expect((await deliveries(flaky)).map((d) => d.status)).toEqual([400, 400, 200]);
    // Each attempt signs a fresh token (new jti), all for the same session.
    const flakyTokens = (await deliveries(flaky)).map((d) => decodeJwt((d as unknown as { form: { logout_token: string } }).form.logout_token));
    expect(new Set(flakyTokens.map((t) => t.jti)).size).toBe(3);
    expect(new Set(flakyTokens.map((t) => t.sid))).toEqual(new Set([sessionId]));

    const deadRow = await rowFor(deadClient.client_id);
    expect(deadRow).toMatchObject({ retry_count: 5, dead_lettered_at: expect.any(Number) });
    expect(deadRow?.final_error).toContain("backchannel_logout: HTTP 503");
    expect((await deliveries(dead)).length).toBe(5);
    const failed = (await (await admin("GET", "/failed-events", undefined, tenantId)).json()) as Array<{ id: string; event_type: string }>;
    expect(failed.map((f) => f.id)).toContain(deadRow?.id);
    expect(failed.find((f) => f.id === deadRow?.id)?.event_type).toBe("internal.backchannel_logout");
  });
});

/** Lifts a block without a write event (no cascade): what a refresh then answers shows whether the token was revoked. */
async function unblockQuietly(userId: string, tenantId = tenant) {
  await runInDurableObject(env.TENANT.getByName(tenantId), (_o, state) => state.storage.sql.exec("UPDATE users SET blocked = 0 WHERE user_id = ?", userId));
}

describe("blocking a user cascades (SPEC §3.3)", () => {
  it("ends every live session, revokes every refresh token (sessions revoked earlier included) and notifies the sessions' clients", async () => {
    const name = uniqueId("bcl-block");
    const client = await app(name);
    const bystander = await app();
    const user = await seedUser(tenant, `${uniqueId("u")}@example.com`);
    const other = await seedUser(tenant, `${uniqueId("u")}@example.com`);
    const issuer = `http://${host}/`;
    const s1 = await sessionCookie(tenant, user.user_id, client.client_id, { issuer });
    const s2 = await sessionCookie(tenant, user.user_id, bystander.client_id, { issuer });
    const earlier = await sessionCookie(tenant, user.user_id, bystander.client_id, { issuer });
    const [t1, t2, t0] = [await ssoTokens(client, s1), await ssoTokens(bystander, s2), await ssoTokens(bystander, earlier)];
    const otherTokens = await ssoTokens(client, await sessionCookie(tenant, other.user_id, client.client_id, { issuer }));
    // A session revoked earlier whose own cascade never reached the user's object: its token is still live.
    const earlierId = earlier.slice("gh_session=".length).split(".")[0] as string;
    await runInDurableObject(env.TENANT.getByName(tenant), (_o, state) => state.storage.sql.exec("DELETE FROM sessions WHERE id = ?", earlierId));
    expect((await refresh(bystander, t0.refresh_token)).status).toBe(200);

    await recordUserWrite(user.user_id, { blocked: true });
    const sessions = (await (await admin("GET", `/users/${encodeURIComponent(user.user_id)}/sessions`)).json()) as unknown[];
    expect(sessions).toEqual([]);
    await relay(tenant);
    // While blocked the grant says so (the reference's description); once unblocked, the tokens stay revoked.
    const whileBlocked = await refresh(client, t1.refresh_token);
    expect(await whileBlocked.json()).toEqual({ error: "invalid_grant", error_description: "user is blocked" });
    await unblockQuietly(user.user_id);
    await expectRevoked(client, t1.refresh_token);
    await expectRevoked(bystander, t2.refresh_token);
    // The rotated successor of the earlier session's token is revoked too (every token of the user).
    const listed = (await (await admin("GET", `/users/${encodeURIComponent(user.user_id)}/refresh-tokens`)).json()) as Array<{ revoked_at?: string }>;
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((t) => typeof t.revoked_at === "string")).toBe(true);
    // Only the client that took part and registered a URI hears of it, once per session it was in.
    const tokens = await logoutTokens(name);
    expect(tokens).toHaveLength(1);
    expect(decodeJwt(tokens[0] as string)).toMatchObject({ sub: user.user_id, sid: s1.slice("gh_session=".length).split(".")[0] });
    const [row] = (await outboxRows(tenant, "internal.refresh_revocation")).filter((r) => JSON.parse(r.payload).user_id === user.user_id && JSON.parse(r.payload).reason === "account-deactivated");
    // Every token, and the sessions that ended now named so none of them can start a family afterwards.
    const payload = JSON.parse(row?.payload as string) as { ended_session_ids: string[] };
    expect(payload).toMatchObject({ user_id: user.user_id, session_ids: null, reason: "account-deactivated" });
    expect([...payload.ended_session_ids].sort()).toEqual([s1, s2].map((cookie) => cookie.slice("gh_session=".length).split(".")[0]).sort());
    // Another user is untouched.
    expect((await refresh(client, otherTokens.refresh_token)).status).toBe(200);
  });

  it("PATCH /api/v2/users/{id} with blocked: true ends the sessions, revokes the refresh tokens and notifies, through the real route", async () => {
    const name = uniqueId("bcl-patch");
    const client = await app(name);
    const user = await seedUser(tenant, `${uniqueId("u")}@example.com`);
    const issuer = `http://${host}/`;
    const cookie = await sessionCookie(tenant, user.user_id, client.client_id, { issuer });
    const tokens = await ssoTokens(client, cookie);
    expect((await refresh(client, tokens.refresh_token)).status).toBe(200);

    const patched = await admin("PATCH", `/users/${encodeURIComponent(user.user_id)}`, { blocked: true });
    expect(patched.status, await patched.clone().text()).toBe(200);
    expect(((await patched.json()) as { blocked: boolean }).blocked).toBe(true);
    expect(await (await admin("GET", `/users/${encodeURIComponent(user.user_id)}/sessions`)).json()).toEqual([]);
    await relayUntilNotified(name);
    const listed = (await (await admin("GET", `/users/${encodeURIComponent(user.user_id)}/refresh-tokens`)).json()) as Array<{ revoked_at?: string }>;
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((t) => typeof t.revoked_at === "string")).toBe(true);
    const whileBlocked = await refresh(client, tokens.refresh_token);
    expect(await whileBlocked.json()).toEqual({ error: "invalid_grant", error_description: "user is blocked" });
    const sent = await logoutTokens(name);
    expect(sent).toHaveLength(1);
    expect(decodeJwt(sent[0] as string)).toMatchObject({ sub: user.user_id, aud: client.client_id });
    // The old session cookie no longer signs the user in silently.
    const silent = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", prompt: "none" }, { host, cookie });
    expect(redirectParams(silent).query.get("error")).toBe("login_required");
  });

  it("an update that leaves the user unblocked, or a failed update, cascades nothing; re-blocking re-runs the cascade", async () => {
    const client = await app();
    const user = await seedUser(tenant, `${uniqueId("u")}@example.com`);
    const cookie = await sessionCookie(tenant, user.user_id, client.client_id, { issuer: `http://${host}/` });
    const tokens = await ssoTokens(client, cookie);
    const cascades = async () => (await outboxRows(tenant, "internal.refresh_revocation")).filter((r) => JSON.parse(r.payload).user_id === user.user_id).length;
    await recordUserWrite(user.user_id, { blocked: false });
    await recordUserWrite(user.user_id, { blocked: true, failed: true });
    expect(await cascades()).toBe(0);
    expect((await admin("GET", `/users/${encodeURIComponent(user.user_id)}/sessions`).then((r) => r.json())) as unknown[]).toHaveLength(1);
    await recordUserWrite(user.user_id, { blocked: true });
    await recordUserWrite(user.user_id, { blocked: true });
    expect(await cascades()).toBe(2);
    await relay(tenant);
    await unblockQuietly(user.user_id);
    await expectRevoked(client, tokens.refresh_token);
  });

  it("deleting a user ends its sessions and notifies its clients (account-deleted)", async () => {
    const name = uniqueId("bcl-del");
    const client = await app(name);
    const user = await seedUser(tenant, `${uniqueId("u")}@example.com`);
    const cookie = await sessionCookie(tenant, user.user_id, client.client_id, { issuer: `http://${host}/` });
    await recordUserWrite(user.user_id, { action: "deleted" });
    const sessionId = cookie.slice("gh_session=".length).split(".")[0] as string;
    expect((await admin("GET", `/sessions/${sessionId}`)).status).toBe(404);
    await relayUntilNotified(name);
    const notices = (await outboxRows(tenant, "internal.backchannel_logout")).filter((r) => r.payload.includes(sessionId));
    expect(notices.map((r) => JSON.parse(r.payload).initiator)).toEqual(["account-deleted"]);
    expect(await logoutTokens(name)).toHaveLength(1);
  });
});
