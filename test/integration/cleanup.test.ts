import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { CLEANUP_INTERVAL_MS, CODE_PASS_ROWS, SWEEP_BUDGET_ROWS } from "../../src/objects/tenant/login/cleanup";
import type { TenantObject } from "../../src/objects/tenant/tenant-object";
import type { UserObject } from "../../src/objects/user/user-object";
import { setClock } from "../../src/shared/clock";
import { codeShardName } from "../../src/shared/object-names";
import { openCode } from "../../src/worker/oauth/tokens/sealed-code";
import { createTenant, mgmt, uniqueId } from "../helpers/api";
import { authorize, redirectParams, seedClient, seedUser, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";
import { deliveries, fireAlarm, hookUrl, injectClock, outboxRows, tenantSql } from "../helpers/outbox";

/**
 * Cleanup by each object's alarm (SPEC §6.3 "clean up sessions", §8; issue 10 point 8): expired rows go in
 * bounded batches, unexpired ones stay, the relay is never starved, and natural expiry cascades nothing.
 */

const CALLBACK = "https://app.example.com/callback";
const stub = (tenantId: string) => env.TENANT.getByName(tenantId);

/** Re-arms the tenant's alarm as the cron safety net does; answers the time it was set to. */
const poke = (tenantId: string) => runInDurableObject(stub(tenantId), (o: TenantObject) => o.pokeOutbox());
const alarmOf = (tenantId: string) => runInDurableObject(stub(tenantId), (_o, state) => state.storage.getAlarm());
const count = async (tenantId: string, table: string) => (await tenantSql<{ n: number }>(tenantId, `SELECT count(*) AS n FROM ${table}`))[0]?.n ?? 0;

/** Inserts `n` rows expiring at `expiresAt` into each cleaned table (the same shapes the flows write). */
async function insertRows(tenantId: string, tables: string[], n: number, expiresAt: number, tag = uniqueId("r")) {
  await runInDurableObject(stub(tenantId), (_o, state) => {
    const series = "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?)";
    const sql = state.storage.sql;
    for (const table of tables) {
      if (table === "authorization_codes") {
        sql.exec(`${series} INSERT INTO authorization_codes (code_hash, client_id, user_id, redirect_uri, grant, expires_at, created_at)
          SELECT ? || i, 'c', 'u', 'https://x', '{}', ?, ? FROM s`, n, `${tag}-`, expiresAt, expiresAt - 60_000);
      } else if (table === "login_sessions") {
        sql.exec(`${series} INSERT INTO login_sessions (id, client_id, request, csrf_token, created_at, expires_at)
          SELECT ? || i, 'c', '{}', 'x', ?, ? FROM s`, n, `${tag}-`, expiresAt - 60_000, expiresAt);
      } else if (table === "sessions") {
        sql.exec(`${series} INSERT INTO sessions (id, secret_hash, user_id, client_ids, authenticated_at, last_interaction_at, expires_at, created_at, updated_at)
          SELECT ? || i, 'h', 'u', '[]', ?, ?, ?, ?, ? FROM s`, n, `${tag}-`, expiresAt - 60_000, expiresAt - 60_000, expiresAt, expiresAt - 60_000, expiresAt - 60_000);
      } else if (table === "login_tickets") {
        sql.exec(`${series} INSERT INTO login_tickets (ticket_hash, client_id, user_id, expires_at, created_at)
          SELECT ? || i, 'c', 'u', ?, ? FROM s`, n, `${tag}-`, expiresAt, expiresAt - 60_000);
      } else if (table === "client_assertion_jtis") {
        sql.exec(`${series} INSERT INTO client_assertion_jtis (client_id, jti, expires_at) SELECT 'c', ? || i, ? FROM s`, n, `${tag}-`, expiresAt);
      } else if (table === "revoked_access_tokens") {
        sql.exec(`${series} INSERT INTO revoked_access_tokens (jti, expires_at) SELECT ? || i, ? FROM s`, n, `${tag}-`, expiresAt);
      }
    }
  });
}

const ALL = ["authorization_codes", "login_sessions", "sessions", "login_tickets", "client_assertion_jtis", "revoked_access_tokens"];

describe("tenant cleanup, a job of the tenant object's one alarm", () => {
  it("removes expired codes, login sessions, sessions, tickets, assertion jtis and revoked tokens, keeps unexpired ones, then rests", async () => {
    const tenantId = await createTenant();
    const clock = await injectClock(tenantId);
    await insertRows(tenantId, ALL, 3, clock.now - 1);
    await insertRows(tenantId, ALL, 2, clock.now + 30_000);
    // Nothing is due before the earliest expiry; the alarm is set to it.
    expect(await poke(tenantId)).toBe(clock.now - 1);
    expect(await fireAlarm(tenantId)).toBe(true);
    for (const table of ALL) expect(await count(tenantId, table), table).toBe(2);
    // The next pass waits for the rest interval, even though rows expire before it.
    expect(await alarmOf(tenantId)).toBe(clock.now + CLEANUP_INTERVAL_MS);
    clock.now += CLEANUP_INTERVAL_MS;
    await fireAlarm(tenantId);
    for (const table of ALL) expect(await count(tenantId, table), table).toBe(0);
    // Nothing left to clean and no outbox work: no alarm.
    expect(await poke(tenantId)).toBeNull();
  });

  it("a consumed code stays until it expires, so a replay is still refused as a replay", async () => {
    const tenantId = await createTenant();
    const host = `${tenantId}.localhost:8787`;
    const client = await seedClient(tenantId, { callbacks: [CALLBACK] });
    const user = await seedUser(tenantId, `${uniqueId("u")}@example.com`);
    const cookie = await sessionCookie(tenantId, user.user_id, client.client_id);
    const res = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid" }, { host, cookie });
    const code = redirectParams(res).query.get("code") as string;
    const redeem = () => tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
    const first = await redeem();
    expect(first.status).toBe(200);
    const { access_token } = (await first.json()) as { access_token: string };
    await poke(tenantId);
    await runInDurableObject(stub(tenantId), (o: TenantObject) => o.outbox.alarm());
    // Issue 31: the code is sealed; its redemption is recorded in its code shard, whose alarm forgets it only
    // once the code has expired (the tenant's cleanup has nothing of it to delete).
    const shard = env.CODES.getByName(codeShardName(tenantId, (await openCode(env.ENCRYPTION_KEY, tenantId, code))?.id as string));
    await runDurableObjectAlarm(shard);
    expect(await runInDurableObject(shard, (_o, state) => state.storage.sql.exec("SELECT count(*) AS n FROM redeemed_codes").one().n)).toBe(1);
    expect((await redeem()).status).toBe(403);
    // The replay still revoked what the code issued (RFC 6749 §4.1.2).
    const userinfo = await (await import("../helpers/api")).call("/userinfo", { host, headers: { authorization: `Bearer ${access_token}` } });
    expect(userinfo.status).toBe(401);
  });

  it(`deletes codes in passes of ${CODE_PASS_ROWS.toLocaleString("en")} rows; a full pass is due again at once, after the relay`, async () => {
    const tenantId = await createTenant();
    const clock = await injectClock(tenantId);
    await insertRows(tenantId, ["authorization_codes"], CODE_PASS_ROWS + 10, clock.now - 1);
    const name = uniqueId("hook");
    const hook = await mgmt("POST", "/hooks", { headers: { "tenant-id": tenantId }, body: { trigger_id: "post-user-login", url: hookUrl(name) } });
    expect(hook.status).toBe(201);
    await runInDurableObject(stub(tenantId), (o: TenantObject) =>
      o.outbox.commit((tx) => tx.emit({ event_type: "hook.post-user-login", payload: { trigger_id: "post-user-login", data: {}, timestamp: "" } })),
    );
    await fireAlarm(tenantId);
    // The relay ran first: the event is delivered in the same alarm that made the first code pass.
    expect(await deliveries(name)).toHaveLength(1);
    expect((await outboxRows(tenantId, "hook.post-user-login"))[0]?.processed_at).toEqual(expect.any(Number));
    expect(await count(tenantId, "authorization_codes")).toBe(10);
    expect(await alarmOf(tenantId)).toBe(clock.now);
    await fireAlarm(tenantId);
    expect(await count(tenantId, "authorization_codes")).toBe(0);
  });

  it(`sweeps the session tables round-robin under a budget of ${SWEEP_BUDGET_ROWS.toLocaleString("en")} rows, so a backlog in one does not starve another`, async () => {
    const tenantId = await createTenant();
    const clock = await injectClock(tenantId);
    await insertRows(tenantId, ["login_sessions"], SWEEP_BUDGET_ROWS + 500, clock.now - 1);
    await insertRows(tenantId, ["sessions"], 5, clock.now - 1);
    await poke(tenantId);
    await fireAlarm(tenantId);
    expect(await count(tenantId, "login_sessions")).toBe(500);
    expect(await count(tenantId, "sessions")).toBe(5);
    expect(await alarmOf(tenantId)).toBe(clock.now);
    // The next pass starts after the table that used up the budget.
    await fireAlarm(tenantId);
    expect(await count(tenantId, "sessions")).toBe(0);
    expect(await count(tenantId, "login_sessions")).toBe(0);
  });
});

describe("natural expiry cascades nothing (SPEC §3.3)", () => {
  it("an expired session is cleaned without touching its refresh tokens; only clients opted into session-expired are notified", async () => {
    const tenantId = await createTenant();
    const host = `${tenantId}.localhost:8787`;
    const [optedIn, defaults] = [uniqueId("exp-in"), uniqueId("exp-default")];
    const clients: TestClient[] = [];
    for (const [name, initiators] of [[optedIn, { mode: "custom", selected_initiators: ["session-expired"] }], [defaults, undefined]] as const) {
      const client = await seedClient(tenantId, { callbacks: [CALLBACK] });
      const oidc_logout = { backchannel_logout_urls: [hookUrl(name)], ...(initiators ? { backchannel_logout_initiators: initiators } : {}) };
      expect((await mgmt("PATCH", `/clients/${client.client_id}`, { headers: { "tenant-id": tenantId }, body: { oidc_logout } })).status).toBe(200);
      clients.push(client);
    }
    const [first, second] = clients as [TestClient, TestClient];
    const user = await seedUser(tenantId, `${uniqueId("u")}@example.com`);
    const expiresAt = Date.now() + 3_600_000;
    const cookie = await sessionCookie(tenantId, user.user_id, first.client_id, { expiresAt, issuer: `http://${host}/` });
    const tokens: string[] = [];
    for (const client of [first, second]) {
      const res = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access" }, { host, cookie });
      const code = redirectParams(res).query.get("code") as string;
      const out = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
      tokens.push(((await out.json()) as { refresh_token: string }).refresh_token);
    }
    const clock = await injectClock(tenantId, expiresAt + 1);
    await poke(tenantId);
    await fireAlarm(tenantId);
    await fireAlarm(tenantId);
    expect(await count(tenantId, "sessions")).toBe(0);
    expect(await outboxRows(tenantId, "internal.refresh_revocation")).toEqual([]);
    expect((await deliveries(optedIn)).length).toBe(1);
    expect(await deliveries(defaults)).toEqual([]);
    expect(clock.now).toBeGreaterThan(expiresAt);
    const refreshed = await tokenForm({ grant_type: "refresh_token", refresh_token: tokens[1] as string, client_id: second.client_id, client_secret: second.client_secret }, {}, host);
    expect(refreshed.status).toBe(200);
  });
});

describe("user object cleanup, on its own alarm", () => {
  let tenant: string;
  let host: string;
  beforeAll(async () => {
    tenant = await createTenant();
    host = `${tenant}.localhost:8787`;
  });
  afterEach(() => setClock());

  const userStub = (userId: string) => env.USER.getByName(`${tenant}/${userId}`);
  const rows = (userId: string) =>
    runInDurableObject(userStub(userId), (_o, state) =>
      state.storage.sql.exec("SELECT id, rotated_to, expires_at, idle_expires_at FROM refresh_tokens ORDER BY rowid").toArray(),
    ) as Promise<Array<{ id: string; rotated_to: string | null; expires_at: number | null; idle_expires_at: number | null }>>;

  async function issued(settings: Record<string, unknown>) {
    const client = await seedClient(tenant, { callbacks: [CALLBACK] });
    expect((await mgmt("PATCH", `/clients/${client.client_id}`, { headers: { "tenant-id": tenant }, body: { refresh_token: settings } })).status).toBe(200);
    const user = await seedUser(tenant, `${uniqueId("u")}@example.com`);
    const cookie = await sessionCookie(tenant, user.user_id, client.client_id);
    const res = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access" }, { host, cookie });
    const code = redirectParams(res).query.get("code") as string;
    const out = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
    return { client, user, refreshToken: ((await out.json()) as { refresh_token: string }).refresh_token };
  }

  const refresh = (client: TestClient, token: string) =>
    tokenForm({ grant_type: "refresh_token", refresh_token: token, client_id: client.client_id, client_secret: client.client_secret }, {}, host);

  it("removes an expired family when its alarm fires at the token's expiry; an early alarm removes nothing", async () => {
    const s = await issued({ token_lifetime: 3600, idle_token_lifetime: 600 });
    const [row] = await rows(s.user.user_id);
    const alarm = await runInDurableObject(userStub(s.user.user_id), (_o, state) => state.storage.getAlarm());
    expect(alarm).toBe(row?.idle_expires_at);
    // A rotation moves the idle expiry later: the alarm stays where it was (no write on the hot path).
    await new Promise((resolve) => setTimeout(resolve, 5));
    const next = (await (await refresh(s.client, s.refreshToken)).json()) as { refresh_token: string };
    expect(await runInDurableObject(userStub(s.user.user_id), (_o, state) => state.storage.getAlarm())).toBe(alarm);
    // It fires early for the rotated family: nothing goes, and it re-arms at the head's expiry.
    setClock(() => (alarm as number) + 1);
    expect(await runDurableObjectAlarm(userStub(s.user.user_id))).toBe(true);
    const [, head] = await rows(s.user.user_id);
    expect(await rows(s.user.user_id)).toHaveLength(2);
    expect(await runInDurableObject(userStub(s.user.user_id), (_o, state) => state.storage.getAlarm())).toBe(head?.idle_expires_at);
    setClock(() => (head?.idle_expires_at as number) + 1);
    await runDurableObjectAlarm(userStub(s.user.user_id));
    expect(await rows(s.user.user_id)).toEqual([]);
    setClock();
    const res = await refresh(s.client, next.refresh_token);
    expect(((await res.json()) as { error_description: string }).error_description).toBe("Invalid refresh token");
  });

  it("a rotation that gives a family its first expiry arms the alarm at it", async () => {
    const s = await issued({ expiration_type: "non-expiring" });
    const alarmNow = () => runInDurableObject(userStub(s.user.user_id), (_o, state) => state.storage.getAlarm());
    expect(await alarmNow()).toBeNull();
    expect((await mgmt("PATCH", `/clients/${s.client.client_id}`, { headers: { "tenant-id": tenant }, body: { refresh_token: { idle_token_lifetime: 600 } } })).status).toBe(200);
    expect((await refresh(s.client, s.refreshToken)).status).toBe(200);
    const [, head] = await rows(s.user.user_id);
    expect(head?.idle_expires_at).toEqual(expect.any(Number));
    await expect.poll(alarmNow).toBe(head?.idle_expires_at);
  });

  it("keeps a family whose client became non-expiring, writing the dropped expiries instead (SPEC §3.3)", async () => {
    const s = await issued({ idle_token_lifetime: 600 });
    const [row] = await rows(s.user.user_id);
    expect((await mgmt("PATCH", `/clients/${s.client.client_id}`, { headers: { "tenant-id": tenant }, body: { refresh_token: { expiration_type: "non-expiring" } } })).status).toBe(200);
    setClock(() => (row?.idle_expires_at as number) + 1);
    await runDurableObjectAlarm(userStub(s.user.user_id));
    expect(await rows(s.user.user_id)).toEqual([{ id: row?.id, rotated_to: null, expires_at: null, idle_expires_at: null }]);
    expect((await refresh(s.client, s.refreshToken)).status).toBe(200);
  });

  it("removes the families of a deleted client once expired, and failed logins once out of the window", async () => {
    const s = await issued({ token_lifetime: 600, idle_token_lifetime: 600 });
    expect((await mgmt("DELETE", `/clients/${s.client.client_id}`, { headers: { "tenant-id": tenant } })).status).toBe(204);
    await userStub(s.user.user_id).attempts().begin();
    const failures = () => runInDurableObject(userStub(s.user.user_id), (_o: UserObject, state) => state.storage.sql.exec("SELECT count(*) AS n FROM login_failures").one().n);
    expect(await failures()).toBe(1);
    setClock(() => Date.now() + 601_000);
    await runDurableObjectAlarm(userStub(s.user.user_id));
    expect(await rows(s.user.user_id)).toEqual([]);
    expect(await failures()).toBe(0);
    expect(await runInDurableObject(userStub(s.user.user_id), (_o, state) => state.storage.getAlarm())).toBeNull();
  });

  it("remembers a revoked session for a day (no refresh family may start under it), then the alarm forgets it", async () => {
    const user = await seedUser(tenant, `${uniqueId("u")}@example.com`);
    const stub = userStub(user.user_id);
    const ended = () => runInDurableObject(stub, (_o, state) => state.storage.sql.exec("SELECT session_id FROM ended_sessions").toArray().map((r) => r.session_id));
    await stub.revokeRefreshTokens(["ses_gone"]);
    expect(await ended()).toEqual(["ses_gone"]);
    const alarm = (await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())) as number;
    expect(alarm).toBeGreaterThan(Date.now() + 23 * 3600_000);
    setClock(() => Date.now() + 3600_000);
    await runDurableObjectAlarm(stub);
    expect(await ended()).toEqual(["ses_gone"]);
    setClock(() => alarm + 1);
    await runDurableObjectAlarm(stub);
    expect(await ended()).toEqual([]);
    expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).toBeNull();
  });

  it("a cascade that lands after the user object was wiped still arms the alarm that removes what it recorded", async () => {
    const user = await seedUser(tenant, `${uniqueId("u")}@example.com`);
    const stub = userStub(user.user_id);
    // A failed login arms the alarm five minutes out (and the object remembers that time).
    await stub.attempts().begin();
    expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).toEqual(expect.any(Number));
    await stub.wipe();
    expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).toBeNull();
    // The deletion's cascade arrives after the wipe and records the ended session for a day.
    await stub.revokeRefreshTokens(null, ["ses_late"]);
    await expect.poll(() => runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).toBeGreaterThan(Date.now() + 23 * 3600_000);
  });
});
