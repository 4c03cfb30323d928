import { env, runInDurableObject } from "cloudflare:test";
import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant, mgmt } from "../helpers/api";
import { authorize, pkce, redirectParams, seedClient, seedUser, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";
import { createApi, tenantManagementToken } from "../helpers/management";
import { applyMigrations } from "../../src/objects/sql";
import { userMigrations } from "../../src/objects/user/migrations";
import { CALLBACK, expectRefused, loginOffline, refreshGrant, refreshSetup, type TokenBody } from "../helpers/refresh";

/** Refresh tokens (SPEC §2.8, §3.3, §4.1 rule 1, §7; RFC 9700 §4.14.2), through the real token endpoint. */

let tenant: string;
let host: string;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
});

const setup = (settings: Record<string, unknown> = {}, fields: Parameters<typeof seedClient>[1] = {}) => refreshSetup(tenant, settings, fields);
const login = loginOffline;
const refresh = (client: TestClient, refresh_token: string, extra: Record<string, string> = {}) => refreshGrant(tenant, client, refresh_token, extra);

describe("issuing (SPEC §4.1 rule 1)", () => {
  it("issues a refresh token only when offline_access is granted and the client may use the grant", async () => {
    const s = await setup();
    expect((await login(s)).refresh_token).toMatch(/^v1\./);
    expect((await login(s, { scope: "openid" })).refresh_token).toBeUndefined();
    const noGrant = await setup({}, { grant_types: ["authorization_code"] });
    expect((await login(noGrant)).refresh_token).toBeUndefined();
  });

  it("with an audience, only when the API allows offline access", async () => {
    const s = await setup();
    const closed = await createApi(["read:x"], { headers: { "tenant-id": tenant } });
    expect((await login(s, { audience: closed.identifier })).refresh_token).toBeUndefined();
    const open = await createApi(["read:x"], { headers: { "tenant-id": tenant } });
    await mgmt("PATCH", `/resource-servers/${open.id}`, { headers: { "tenant-id": tenant }, body: { allow_offline_access: true } });
    const tokens = await login(s, { audience: open.identifier, scope: "openid offline_access read:x" });
    expect(tokens.refresh_token).toBeTruthy();
    const next = (await (await refresh(s.client, tokens.refresh_token as string)).json()) as TokenBody;
    expect(decodeJwt(next.access_token).aud).toContain(open.identifier);
    expect(next.scope.split(" ")).toContain("read:x");
  });
});

describe("rotation and reuse (SPEC §3.3, RFC 9700 §4.14.2)", () => {
  it("rotates on each use; the new access token works and the ID token names the same user", async () => {
    const s = await setup();
    const first = await login(s);
    const res = await refresh(s.client, first.refresh_token as string);
    expect(res.status, `${first.refresh_token} -> ${await res.clone().text()}`).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const next = (await res.json()) as TokenBody;
    expect(next.refresh_token).toMatch(/^v1\./);
    expect(next.refresh_token).not.toBe(first.refresh_token);
    expect(decodeJwt(next.id_token as string).sub).toBe(s.user.user_id);
    const info = await call("/userinfo", { host, headers: { authorization: `Bearer ${next.access_token}` } });
    expect(info.status).toBe(200);
    expect((await refresh(s.client, next.refresh_token as string)).status).toBe(200);
  });

  it("tolerates the previous token within the leeway with the same successor", async () => {
    const s = await setup({ leeway: 30 });
    const first = await login(s);
    const resA = await refresh(s.client, first.refresh_token as string);
    const resB = await refresh(s.client, first.refresh_token as string);
    expect([resA.status, resB.status]).toEqual([200, 200]);
    const a = (await resA.json()) as TokenBody;
    const b = (await resB.json()) as TokenBody;
    expect(a.refresh_token).toMatch(/^v1\./);
    expect(b.refresh_token).toBe(a.refresh_token);
    expect(b.access_token).not.toBe(a.access_token);
  });

  it("a refused wider scope does not spend the token: without leeway the same token still refreshes, narrower", async () => {
    const s = await setup({ leeway: 0 });
    const first = await login(s);
    const wider = await refresh(s.client, first.refresh_token as string, { scope: "openid offline_access email" });
    expect(wider.status).toBe(400);
    expect(await wider.json()).toEqual({ error: "invalid_scope", error_description: "Scopes not granted by the refresh token: email" });
    const narrower = await refresh(s.client, first.refresh_token as string, { scope: "openid" });
    expect(narrower.status, await narrower.clone().text()).toBe(200);
    const body = (await narrower.json()) as TokenBody & { scope: string };
    expect(body.scope).toBe("openid");
    // The successor keeps the family's scope: the narrowing was for that response only.
    expect((await refresh(s.client, body.refresh_token as string, { scope: "openid offline_access" })).status).toBe(200);
  });

  it("a replayed token cannot dodge reuse detection by asking for a wider scope", async () => {
    const s = await setup({ leeway: 0 });
    const first = await login(s);
    const second = (await (await refresh(s.client, first.refresh_token as string)).json()) as TokenBody;
    await expectRefused(await refresh(s.client, first.refresh_token as string, { scope: "openid email" }), "Refresh token has been revoked");
    await expectRefused(await refresh(s.client, second.refresh_token as string), "Refresh token has been revoked");
  });

  it("reuse outside the leeway revokes the whole family, successor included", async () => {
    const s = await setup({ leeway: 0 });
    const first = await login(s);
    const second = (await (await refresh(s.client, first.refresh_token as string)).json()) as TokenBody;
    await expectRefused(await refresh(s.client, first.refresh_token as string), "Refresh token has been revoked");
    await expectRefused(await refresh(s.client, second.refresh_token as string), "Refresh token has been revoked");
  });

  it("parallel refreshes of one token never leave two live branches", async () => {
    const s = await setup({ leeway: 30 });
    const first = await login(s);
    const results = await Promise.all(Array.from({ length: 10 }, () => refresh(s.client, first.refresh_token as string)));
    const bodies = (await Promise.all(results.map((r) => r.json()))) as TokenBody[];
    const successors = new Set(bodies.map((b) => b.refresh_token));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(successors.size).toBe(1);
  });

  it("without leeway, parallel reuse ends with nothing usable", async () => {
    const s = await setup({ leeway: 0 });
    const first = await login(s);
    const results = await Promise.all(Array.from({ length: 8 }, () => refresh(s.client, first.refresh_token as string)));
    const winners = (await Promise.all(results.filter((r) => r.status === 200).map((r) => r.json()))) as TokenBody[];
    expect(winners.length).toBe(1);
    expect(results.filter((r) => r.status === 403)).toHaveLength(7);
    for (const w of winners) expect((await refresh(s.client, w.refresh_token as string)).status).toBe(403);
  });

  it("another client's token is `Invalid grant` and stays usable by its own client", async () => {
    const s = await setup();
    const other = await seedClient(tenant, { callbacks: [CALLBACK] });
    const first = await login(s);
    await expectRefused(await refresh(other, first.refresh_token as string), "Invalid grant");
    expect((await refresh(s.client, first.refresh_token as string)).status).toBe(200);
  });

  it("unknown or malformed tokens are `Invalid refresh token`; 400 when the client is not OIDC-conformant", async () => {
    const s = await setup();
    await expectRefused(await refresh(s.client, "nope"), "Invalid refresh token");
    const first = await login(s);
    const tampered = `${(first.refresh_token as string).slice(0, -4)}AAAA`;
    await expectRefused(await refresh(s.client, tampered), "Invalid refresh token");
    const legacy = await setup({}, { oidc_conformant: false });
    await expectRefused(await refresh(legacy.client, "nope"), "Invalid refresh token", 400);
  });

  it("a narrower scope may be asked for; a wider one is invalid_scope", async () => {
    const s = await setup();
    const first = await login(s, { scope: "openid email offline_access" });
    const narrow = (await (await refresh(s.client, first.refresh_token as string, { scope: "openid offline_access" })).json()) as TokenBody;
    expect(narrow.scope.split(" ").sort()).toEqual(["offline_access", "openid"]);
    const wide = await refresh(s.client, narrow.refresh_token as string, { scope: "openid profile" });
    expect(wide.status).toBe(400);
    expect(((await wide.json()) as TokenBody).error).toBe("invalid_scope");
  });

  it("a public client refreshes with PKCE login and its client_id alone", async () => {
    const spa = await seedClient(tenant, { callbacks: [CALLBACK], token_endpoint_auth_method: "none" });
    const user = await seedUser(tenant, `spa-${crypto.randomUUID().slice(0, 8)}@example.com`);
    const cookie = await sessionCookie(tenant, user.user_id, spa.client_id);
    const { verifier, challenge } = await pkce();
    const res = await authorize(
      { client_id: spa.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access", code_challenge: challenge, code_challenge_method: "S256" },
      { host, cookie },
    );
    const code = redirectParams(res).query.get("code") as string;
    const tokens = (await (await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: spa.client_id, code_verifier: verifier }, {}, host)).json()) as TokenBody;
    const next = await tokenForm({ grant_type: "refresh_token", refresh_token: tokens.refresh_token as string, client_id: spa.client_id }, {}, host);
    expect(next.status).toBe(200);
  });
});

const userObject = (userId: string) => env.USER.getByName(`${tenant}/${userId}`);

describe("expiry (SPEC §2.8)", () => {
  it("a token past its idle window is `Refresh token has expired`", async () => {
    const s = await setup({ idle_token_lifetime: 3600 });
    const first = await login(s);
    await runInDurableObject(userObject(s.user.user_id), (_o, state) => {
      state.storage.sql.exec("UPDATE refresh_tokens SET idle_expires_at = ?", Date.now() - 1);
    });
    await expectRefused(await refresh(s.client, first.refresh_token as string), "Refresh token has expired");
  });

  it("rotation slides the idle window but never extends the absolute expiry", async () => {
    const s = await setup({ token_lifetime: 7200, idle_token_lifetime: 600 });
    const first = await login(s);
    const rows = () =>
      runInDurableObject(userObject(s.user.user_id), (_o, state) =>
        state.storage.sql.exec("SELECT id, expires_at, idle_expires_at, created_at FROM refresh_tokens ORDER BY rowid").toArray(),
      );
    const [before] = await rows();
    await new Promise((r) => setTimeout(r, 20));
    await refresh(s.client, first.refresh_token as string);
    const [, after] = await rows();
    expect(after?.expires_at).toBe(before?.expires_at);
    expect(Number(after?.idle_expires_at)).toBeGreaterThan(Number(before?.idle_expires_at));
    expect(Number(before?.expires_at) - Number(before?.created_at)).toBe(7_200_000);
  });

  it("switching the client to non-expiring drops inherited expiries at the next use", async () => {
    const s = await setup({ idle_token_lifetime: 3600 });
    const first = await login(s);
    await runInDurableObject(userObject(s.user.user_id), (_o, state) => {
      state.storage.sql.exec("UPDATE refresh_tokens SET idle_expires_at = ?, expires_at = ?", Date.now() - 1, Date.now() - 1);
    });
    await mgmt("PATCH", `/clients/${s.client.client_id}`, { headers: { "tenant-id": tenant }, body: { refresh_token: { expiration_type: "non-expiring" } } });
    const res = await refresh(s.client, first.refresh_token as string);
    expect(res.status).toBe(200);
    const rows = await runInDurableObject(userObject(s.user.user_id), (_o, state) =>
      state.storage.sql.exec("SELECT expires_at, idle_expires_at FROM refresh_tokens WHERE rotated_to IS NULL").toArray(),
    );
    expect(rows).toEqual([{ expires_at: null, idle_expires_at: null }]);
  });
});

describe("revocation", () => {
  it("POST /oauth/revoke with a refresh token revokes its family, only for its own client", async () => {
    const s = await setup();
    const first = await login(s);
    const second = (await (await refresh(s.client, first.refresh_token as string)).json()) as TokenBody;
    const revoke = (client: TestClient, token: string) =>
      call("/oauth/revoke", {
        method: "POST",
        host,
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token, client_id: client.client_id, client_secret: client.client_secret }).toString(),
      });
    const other = await seedClient(tenant, { callbacks: [CALLBACK] });
    expect((await revoke(other, second.refresh_token as string)).status).toBe(200);
    expect((await refresh(s.client, second.refresh_token as string)).status).toBe(200);
    const third = (await (await refresh(s.client, second.refresh_token as string)).json()) as TokenBody;
    expect((await revoke(s.client, third.refresh_token as string)).status).toBe(200);
    await expectRefused(await refresh(s.client, third.refresh_token as string), "Refresh token has been revoked");
  });

  it("replaying the authorization code revokes the refresh token it issued (RFC 6749 §4.1.2)", async () => {
    const s = await setup();
    const res = await authorize({ client_id: s.client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access" }, { host, cookie: s.cookie });
    const code = redirectParams(res).query.get("code") as string;
    const redeem = () => tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: s.client.client_id, client_secret: s.client.client_secret }, {}, host);
    const first = (await (await redeem()).json()) as TokenBody;
    expect((await redeem()).status).toBe(403);
    await expectRefused(await refresh(s.client, first.refresh_token as string), "Refresh token has been revoked");
  });

  it("a replay that reaches the user's object before the first redemption's issue refuses that family outright", async () => {
    const user = await seedUser(tenant, `${crypto.randomUUID().slice(0, 8)}@example.com`);
    const holder = env.USER.getByName(`${tenant}/${user.user_id}`);
    const family = `rt_${"7".repeat(22)}`;
    // The replay's revocation arrives first: nothing to revoke yet, so the family's id is refused.
    expect(await holder.refreshTokens().revokeFamily(family)).toBe(false);
    const issued = await holder.refreshTokens().issue({
      id: family,
      token_hash: "h".repeat(43),
      client_id: "c1",
      user_id: user.user_id,
      session_id: null,
      scope: "openid offline_access",
      audience: null,
      login: { connection: "Username-Password-Authentication", strategy: "auth0", auth_time: 1 },
      device: {},
      lifetime_ms: null,
      idle_lifetime_ms: null,
    });
    expect(issued).toBe("code_replayed");
    expect(await runInDurableObject(holder, (_o, state) => state.storage.sql.exec("SELECT count(*) AS n FROM refresh_tokens").one().n)).toBe(0);
  });
});

describe("management routes (SPEC §4.2 refresh tokens)", () => {
  const asAdmin = { headers: { "tenant-id": "" } };
  const admin = (method: string, path: string) => mgmt(method, path, { headers: { "tenant-id": tenant } });

  it("lists a user's tokens in both pagination modes without secrets or rotation links", async () => {
    const s = await setup();
    const first = await login(s);
    await refresh(s.client, first.refresh_token as string);
    await login(s);
    const path = `/users/${encodeURIComponent(s.user.user_id)}/refresh-tokens`;
    const list = (await (await admin("GET", path)).json()) as Array<Record<string, unknown>>;
    expect(list).toHaveLength(2);
    for (const t of list) {
      expect(t).toMatchObject({ user_id: s.user.user_id, client_id: s.client.client_id, rotating: true });
      for (const hidden of ["token_hash", "token_lookup", "family_id", "rotated_to", "rotated_at"]) expect(t).not.toHaveProperty(hidden);
      expect(t).not.toHaveProperty("revoked_at");
    }
    const page1 = (await (await admin("GET", `${path}?take=1`)).json()) as { tokens: unknown[]; next?: string };
    expect(page1.tokens).toHaveLength(1);
    expect(page1.next).toBeTruthy();
    const page2 = (await (await admin("GET", `${path}?take=1&from=${page1.next}`)).json()) as { tokens: unknown[]; next?: string };
    expect(page2.tokens).toHaveLength(1);
    expect(page2.next).toBeUndefined();
    const totals = (await (await admin("GET", `${path}?include_totals=true`)).json()) as Record<string, unknown>;
    expect(totals).toMatchObject({ start: 0, length: 2, tokens: expect.any(Array) });
    expect(asAdmin).toBeTruthy();
  });

  it("DELETE /users/{id}/refresh-tokens soft-revokes every token (revoked_at visible, grant refused)", async () => {
    const s = await setup();
    const first = await login(s);
    const path = `/users/${encodeURIComponent(s.user.user_id)}/refresh-tokens`;
    expect((await admin("DELETE", path)).status).toBe(204);
    const list = (await (await admin("GET", path)).json()) as Array<{ revoked_at?: string }>;
    expect(list[0]?.revoked_at).toBeTruthy();
    await expectRefused(await refresh(s.client, first.refresh_token as string), "Refresh token has been revoked");
  });

  it("GET and DELETE /refresh-tokens/{id} (and the underscore alias) revoke the family, then delete the row", async () => {
    const s = await setup({ leeway: 30 });
    const first = await login(s);
    const second = (await (await refresh(s.client, first.refresh_token as string)).json()) as TokenBody;
    const [listed] = (await (await admin("GET", `/users/${encodeURIComponent(s.user.user_id)}/refresh-tokens`)).json()) as Array<{ id: string }>;
    const one = await admin("GET", `/refresh_tokens/${listed?.id}`);
    expect(one.status).toBe(200);
    expect(((await one.json()) as { id: string }).id).toBe(listed?.id);
    const del = await admin("DELETE", `/refresh-tokens/${listed?.id}`);
    expect(del.status).toBe(200);
    expect((await admin("GET", `/refresh-tokens/${listed?.id}`)).status).toBe(404);
    // The predecessor, still inside the leeway, no longer reaches a live successor: the family is revoked.
    await expectRefused(await refresh(s.client, first.refresh_token as string), "Refresh token has been revoked");
    await expectRefused(await refresh(s.client, second.refresh_token as string), "Invalid refresh token");
    expect((await admin("GET", "/refresh-tokens/garbage")).status).toBe(404);
  });

  it("who can reach them: no token 401, a token without the scope 403, another tenant's 403; unknown user 404", async () => {
    const s = await setup();
    const path = `/api/v2/users/${encodeURIComponent(s.user.user_id)}/refresh-tokens`;
    expect((await call(path, { host })).status).toBe(401);
    const other = await createTenant();
    const foreign = await mgmt("GET", "/clients", { headers: { "tenant-id": other } });
    expect(foreign.status).toBe(200);
    const theirs = await tenantManagementToken(other, ["read:refresh_tokens", "read:clients"]);
    expect((await mgmt("GET", path.replace("/api/v2", ""), { token: theirs, host })).status).toBe(403);
    const limited = await tenantManagementToken(tenant, ["read:clients"]);
    expect((await mgmt("GET", path.replace("/api/v2", ""), { token: limited, host })).status).toBe(403);
    expect((await admin("GET", "/users/auth0%7Cnobody/refresh-tokens")).status).toBe(404);
  });
});

describe("the per-client cap", () => {
  it("keeps at most 200 live tokens per user and application, revoking the oldest", async () => {
    const userId = `auth0|cap${crypto.randomUUID().slice(0, 8)}`;
    const stub = env.USER.getByName(`${tenant}/${userId}`);
    const ids: string[] = [];
    for (let i = 0; i < 201; i++) {
      const id = `rt_${String(i).padStart(22, "0")}`;
      ids.push(id);
      await stub.refreshTokens().issue({
        id,
        token_hash: `h${i}`,
        client_id: "cap-client",
        user_id: userId,
        session_id: null,
        scope: "openid offline_access",
        audience: null,
        login: {},
        device: {},
        lifetime_ms: null,
        idle_lifetime_ms: null,
      });
    }
    const revoked = await runInDurableObject(stub, (_o, state) =>
      state.storage.sql.exec("SELECT id FROM refresh_tokens WHERE revoked_at IS NOT NULL").toArray(),
    );
    expect(revoked.map((r) => r.id)).toEqual([ids[0]]);
  });
});

describe("storage (migration user/0010: one user's rows without the indexes a rotation paid for)", () => {
  it("tokens stored before the migration keep their rows, rotate, list and still reveal reuse after it", async () => {
    const s = await setup({ leeway: 0 });
    const first = await login(s);
    const second = (await (await refresh(s.client, first.refresh_token as string)).json()) as TokenBody;
    const stub = env.USER.getByName(`${tenant}/${s.user.user_id}`);
    const migrated = await runInDurableObject(stub, async (_o, state) => {
      const sql = state.storage.sql;
      const before = sql.exec("SELECT * FROM refresh_tokens ORDER BY id").toArray();
      // The object as it was before 0010: the schema of the first nine migrations, holding the same rows.
      await state.storage.deleteAll();
      applyMigrations(state.storage, userMigrations.slice(0, 9));
      const oldIndexes = sql.exec("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'refresh_tokens'").toArray().length;
      for (const row of before) {
        const columns = Object.keys(row);
        sql.exec(`INSERT INTO refresh_tokens (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`, ...columns.map((c) => row[c]));
      }
      const { applied } = applyMigrations(state.storage, userMigrations);
      return {
        applied,
        oldIndexes,
        same: JSON.stringify(sql.exec("SELECT * FROM refresh_tokens ORDER BY id").toArray()) === JSON.stringify(before),
        rows: before.length,
        indexes: sql.exec("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'refresh_tokens' AND sql IS NOT NULL").toArray().map((r) => r.name),
      };
    });
    expect(migrated).toEqual({ applied: ["0010_refresh_rotation_indexes"], oldIndexes: 8, same: true, rows: 2, indexes: ["refresh_tokens_by_family"] });
    // The head rotates; the listing shows the live head; the predecessor's replay revokes the family.
    const third = (await (await refresh(s.client, second.refresh_token as string)).json()) as TokenBody;
    expect(third.refresh_token).toMatch(/^v1\./);
    // A family started after it (the per-client cap's query scans the user's rows now) lists first.
    const later = await login(s);
    const listed = await mgmt("GET", `/users/${encodeURIComponent(s.user.user_id)}/refresh-tokens`, { headers: { "tenant-id": tenant } });
    expect(listed.status).toBe(200);
    const heads = (await listed.json()) as { client_id: string; created_at: string }[];
    expect(heads.map((t) => t.client_id)).toEqual([s.client.client_id, s.client.client_id]);
    const [newest, oldest] = heads.map((t) => Date.parse(t.created_at));
    expect(newest).toBeGreaterThan(oldest as number);
    expect((await refresh(s.client, later.refresh_token as string)).status).toBe(200);
    await expectRefused(await refresh(s.client, first.refresh_token as string), "Refresh token has been revoked");
    await expectRefused(await refresh(s.client, third.refresh_token as string), "Refresh token has been revoked");
  });
});
