import { gunzipSync } from "node:zlib";
import { ManagementClient, ManagementError } from "auth0";
import bcrypt from "bcryptjs";
import { decodeJwt } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { sdkOptions } from "./helpers/auth0";
import { passwordLogin } from "./helpers/login";
import { tenantServer } from "./helpers/tenant-server";

/**
 * A black-box walk of the `auth0` SDK (7.1.0) over the management areas of issues 10 and 14: every method of
 * refreshTokens, sessions, users.sessions, users.refreshToken, attackProtection.bruteForceProtection,
 * attackProtection.suspiciousIpThrottling, userBlocks, keys.signing and jobs, with the SDK's own request types
 * and the reference platform's documented response shapes. The divergences it found were fixed, or are SPEC
 * choices asserted as such (a bad token is 403 per SPEC §4.2; soft-revoked refresh tokens stay listed with
 * `revoked_at` per SPEC §2.8).
 */

const DB = "Username-Password-Authentication";
const run = Date.now().toString(36);

/** The status a rejected SDK call carried, or "resolved". */
async function statusOf(p: Promise<unknown>): Promise<number | string> {
  try {
    await p;
    return "resolved";
  } catch (e) {
    if (e instanceof ManagementError) return e.statusCode ?? "no-status";
    return `non-ManagementError: ${(e as Error)?.message}`;
  }
}

/** Collects every item of an SDK Page by walking it with the paginator's own hasNextPage/getNextPage. */
async function walk<T>(first: { data: T[]; hasNextPage(): boolean; getNextPage(): Promise<unknown> }, maxPages = 20) {
  const items: T[] = [...first.data];
  let page = first;
  let pages = 1;
  while (page.hasNextPage() && pages < maxPages) {
    page = (await page.getNextPage()) as typeof first;
    items.push(...page.data);
    pages++;
  }
  return { items, pages };
}

describe("auth0 SDK walk: refresh tokens, sessions, attack protection, user blocks, signing keys, jobs", () => {
  let server: RunningServer;
  let admin: ManagementClient;
  let config: oidc.Configuration;
  let app: { client_id: string; client_secret: string };
  const callback = "https://walk.example.com/callback";
  const origin = "https://walk.example.com";
  const alice = { email: `alice-${run}@example.com`, password: `Pw-${crypto.randomUUID()}`, id: "" };
  const bob = { email: `bob-${run}@example.com`, password: `Pw-${crypto.randomUUID()}`, id: "" };
  let connectionId: string;

  beforeAll(async () => {
    server = await tenantServer(await startServer({ shareable: true, vars: { DEV_MESSAGE_SINK: "1" } }), "sdk-walk");
    admin = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
    const created = await admin.clients.create({
      name: `walk-${run}`,
      app_type: "regular_web",
      callbacks: [callback],
      web_origins: [origin],
      grant_types: ["authorization_code", "refresh_token"],
      token_endpoint_auth_method: "client_secret_post",
      refresh_token: { rotation_type: "rotating", expiration_type: "expiring", leeway: 0 },
    });
    app = { client_id: String(created.client_id), client_secret: String(created.client_secret) };
    config = await oidc.discovery(new URL(`${server.baseUrl}/`), app.client_id, app.client_secret, undefined, { execute: [oidc.allowInsecureRequests] });
    for (const u of [alice, bob]) {
      const user = await admin.users.create({ connection: DB, email: u.email, password: u.password, email_verified: true, name: u.email });
      u.id = String(user.user_id);
    }
    connectionId = String((await admin.connections.list({ name: DB })).data[0]?.id);
  }, 120_000);

  afterAll(async () => {
    if (process.env.GATEHOUSE_E2E_LOG === "1" && server) process.stderr.write(server.log());
    await server?.stop();
  }, 60_000);

  async function coAuthenticate(u: { email: string; password: string }) {
    return fetch(`${server.baseUrl}/co/authenticate`, {
      method: "POST",
      headers: { "content-type": "application/json", origin },
      body: JSON.stringify({ client_id: app.client_id, username: u.email, password: u.password, credential_type: "password" }),
    });
  }

  /** Password login (/co/authenticate then /authorize) and code exchange with offline_access. */
  async function login(u: { email: string; password: string }) {
    const tokens = await passwordLogin(config, { baseUrl: server.baseUrl, clientId: app.client_id, origin, callback, username: u.email, password: u.password, scope: "openid email offline_access" });
    expect(tokens.refresh_token).toBeTruthy();
    return { tokens, sid: String(decodeJwt(tokens.id_token as string).sid) };
  }

  const refreshFails = async (rt: string) => {
    try {
      await oidc.refreshTokenGrant(config, rt);
      return false;
    } catch {
      return true;
    }
  };

  // ---------------------------------------------------------------- refresh tokens
  describe("refreshTokens and users.refreshToken", () => {
    let logins: Array<Awaited<ReturnType<typeof login>>>;

    beforeAll(async () => {
      logins = [];
      for (let i = 0; i < 3; i++) logins.push(await login(alice));
    }, 60_000);

    it("refreshTokens.list walks {refresh_tokens, next} pages with take=1 and returns the reference fields", async () => {
      const first = await admin.refreshTokens.list({ user_id: alice.id, client_id: app.client_id, take: 1 });
      expect(first.data).toHaveLength(1);
      const { items, pages } = await walk(first);
      const live = items.filter((t) => !t.revoked_at);
      expect(live.length).toBeGreaterThanOrEqual(3);
      expect(pages).toBeGreaterThanOrEqual(3);
      expect(new Set(items.map((t) => t.id)).size).toBe(items.length);
      for (const t of live) {
        expect(t).toMatchObject({ user_id: alice.id, client_id: app.client_id, rotating: true });
        expect(typeof t.id).toBe("string");
        expect(typeof t.created_at).toBe("string");
        expect(typeof t.session_id).toBe("string");
        expect(Array.isArray(t.resource_servers)).toBe(true);
        for (const k of ["token_lookup", "token_hash", "family_id", "rotated_to", "rotated_at"]) expect(t).not.toHaveProperty(k);
      }
      expect(live.map((t) => t.session_id).sort()).toEqual(expect.arrayContaining(logins.map((l) => l.sid)));
    });

    it("refreshTokens.list with fields/include_fields returns only the chosen fields", async () => {
      const page = await admin.refreshTokens.list({ user_id: alice.id, fields: "id,client_id", include_fields: true });
      expect(page.data.length).toBeGreaterThan(0);
      for (const t of page.data) expect(Object.keys(t).sort()).toEqual(["client_id", "id"]);
    });

    it("refreshTokens.list without a matching user is empty; missing user_id is a 400", async () => {
      expect(await statusOf(admin.refreshTokens.list({ user_id: "auth0|nobody" }))).toBe(404);
      expect(await statusOf(admin.refreshTokens.list({} as never))).toBe(400);
    });

    it("refreshTokens.get returns the documented token shape; an unknown id is 404", async () => {
      const [t] = (await admin.refreshTokens.list({ user_id: alice.id })).data.filter((x) => !x.revoked_at);
      const got = await admin.refreshTokens.get(String(t?.id));
      expect(got).toMatchObject({ id: t?.id, user_id: alice.id, client_id: app.client_id, session_id: t?.session_id, rotating: true });
      expect(got.device).toEqual(expect.any(Object));
      expect(got.resource_servers).toEqual(expect.any(Array));
      expect(typeof got.expires_at === "string" || got.expires_at === null || got.expires_at === undefined).toBe(true);
      expect(await statusOf(admin.refreshTokens.get("rt_doesnotexist"))).toBe(404);
    });

    it("refreshTokens.update sets refresh_token_metadata; an unknown id is 404", async () => {
      const [t] = (await admin.refreshTokens.list({ user_id: alice.id })).data.filter((x) => !x.revoked_at);
      const updated = await admin.refreshTokens.update(String(t?.id), { refresh_token_metadata: { device: "walk" } });
      expect(updated).toMatchObject({ id: t?.id, refresh_token_metadata: { device: "walk" } });
      expect(await statusOf(admin.refreshTokens.update("rt_doesnotexist", { refresh_token_metadata: {} }))).toBe(404);
    });

    it("refreshTokens.revoke({ ids }) revokes exactly that token", async () => {
      const target = await login(alice);
      const id = (await admin.refreshTokens.list({ user_id: alice.id })).data.find((x) => x.session_id === target.sid && !x.revoked_at)?.id;
      expect(id).toBeTruthy();
      await admin.refreshTokens.revoke({ ids: [String(id)] });
      expect(await refreshFails(String(target.tokens.refresh_token))).toBe(true);
      expect(await refreshFails(String(logins[0]?.tokens.refresh_token))).toBe(false);
    });

    it("refreshTokens.delete removes a token: a later get is 404 and the grant fails", async () => {
      const target = await login(alice);
      const id = String((await admin.refreshTokens.list({ user_id: alice.id })).data.find((x) => x.session_id === target.sid && !x.revoked_at)?.id);
      await admin.refreshTokens.delete(id);
      expect(await refreshFails(String(target.tokens.refresh_token))).toBe(true);
      expect(await statusOf(admin.refreshTokens.get(id))).toBe(404);
    });

    it("users.refreshToken.list walks {tokens, next} pages with take=1 and include_totals", async () => {
      const first = await admin.users.refreshToken.list(alice.id, { take: 1, include_totals: true });
      expect(first.data).toHaveLength(1);
      const { items, pages } = await walk(first);
      expect(pages).toBeGreaterThanOrEqual(2);
      expect(new Set(items.map((t) => t.id)).size).toBe(items.length);
      for (const t of items) expect(t).toMatchObject({ user_id: alice.id, client_id: app.client_id });
    });

    it("users.refreshToken.list for an unknown user is 404 (reference: NotFoundError)", async () => {
      expect(await statusOf(admin.users.refreshToken.list("auth0|nobody-here"))).toBe(404);
    });

    it("users.refreshToken.delete revokes every token of the user (204) and refreshTokens.revoke({user_id, client_id}) succeeds", async () => {
      const l = await login(alice);
      await admin.users.refreshToken.delete(alice.id);
      expect(await refreshFails(String(l.tokens.refresh_token))).toBe(true);
      const left = (await walk(await admin.users.refreshToken.list(alice.id, { take: 100 }))).items;
      expect(left.filter((t) => !t.revoked_at)).toEqual([]);
      await admin.refreshTokens.revoke({ user_id: alice.id, client_id: app.client_id });
    });
  });

  // ---------------------------------------------------------------- sessions
  describe("sessions and users.sessions", () => {
    let sids: string[];
    let tokens: string[];

    beforeAll(async () => {
      sids = [];
      tokens = [];
      for (let i = 0; i < 3; i++) {
        const l = await login(bob);
        sids.push(l.sid);
        tokens.push(String(l.tokens.refresh_token));
      }
    }, 60_000);

    it("sessions.get returns the documented session shape; unknown id is 404", async () => {
      const s = await admin.sessions.get(String(sids[0]));
      expect(s).toMatchObject({ id: sids[0], user_id: bob.id });
      for (const k of ["created_at", "updated_at", "authenticated_at", "last_interacted_at"]) expect(typeof s[k as keyof typeof s]).toBe("string");
      expect(s.clients).toEqual([expect.objectContaining({ client_id: app.client_id })]);
      expect(s.authentication?.methods?.[0]).toMatchObject({ name: expect.any(String) });
      expect(s.device).toEqual(expect.any(Object));
      expect(await statusOf(admin.sessions.get("sess_doesnotexist"))).toBe(404);
    });

    it("sessions.update sets session_metadata", async () => {
      const s = await admin.sessions.update(String(sids[0]), { session_metadata: { where: "walk" } });
      expect(s).toMatchObject({ id: sids[0], session_metadata: { where: "walk" } });
      expect(await statusOf(admin.sessions.update("sess_doesnotexist", { session_metadata: {} }))).toBe(404);
    });

    it("users.sessions.list walks {sessions, next} pages with take=1", async () => {
      const first = await admin.users.sessions.list(bob.id, { take: 1, include_totals: true });
      expect(first.data).toHaveLength(1);
      const { items, pages } = await walk(first);
      expect(pages).toBeGreaterThanOrEqual(3);
      expect(items.map((s) => s.id)).toEqual(expect.arrayContaining(sids));
      expect(new Set(items.map((s) => s.id)).size).toBe(items.length);
      for (const s of items) expect(s.user_id).toBe(bob.id);
    });

    it("users.sessions.list for an unknown user is 404", async () => {
      expect(await statusOf(admin.users.sessions.list("auth0|nobody-here"))).toBe(404);
    });

    it("sessions.revoke ends the session and its refresh tokens; sessions.get is then 404", async () => {
      await admin.sessions.revoke(String(sids[1]));
      expect(await refreshFails(String(tokens[1]))).toBe(true);
      expect(await statusOf(admin.sessions.get(String(sids[1])))).toBe(404);
      expect(await refreshFails(String(tokens[0]))).toBe(false);
    });

    it("sessions.delete ends the session; sessions.get is then 404; deleting it again is 404", async () => {
      await admin.sessions.delete(String(sids[2]));
      expect(await refreshFails(String(tokens[2]))).toBe(true);
      expect(await statusOf(admin.sessions.get(String(sids[2])))).toBe(404);
    });

    it("users.sessions.delete removes all the user's sessions", async () => {
      await admin.users.sessions.delete(bob.id);
      const { items } = await walk(await admin.users.sessions.list(bob.id, { take: 100 }));
      expect(items).toEqual([]);
      expect(await statusOf(admin.sessions.get(String(sids[0])))).toBe(404);
    });

    it("users.sessions.delete also revokes the sessions' refresh tokens", async () => {
      // Reference: "Delete all sessions for a user" also deletes refresh tokens bound to them (issue 10 §5 cascade).
      expect(await refreshFails(String(tokens[0]))).toBe(true);
    });
  });

  // ---------------------------------------------------------------- attack protection
  describe("attackProtection", () => {
    it("bruteForceProtection.get returns the documented shape", async () => {
      const bf = await admin.attackProtection.bruteForceProtection.get();
      expect(typeof bf.enabled).toBe("boolean");
      expect(bf.shields).toEqual(expect.any(Array));
      for (const s of bf.shields ?? []) expect(["block", "user_notification"]).toContain(s);
      expect(bf.allowlist).toEqual(expect.any(Array));
      expect(["count_per_identifier_and_ip", "count_per_identifier"]).toContain(bf.mode);
      expect(typeof bf.max_attempts).toBe("number");
    });

    it("bruteForceProtection.update round-trips every field; invalid values are 400", async () => {
      const before = await admin.attackProtection.bruteForceProtection.get();
      const want = { enabled: true, shields: ["block" as const], allowlist: ["10.1.2.3", "192.168.0.0/24"], mode: "count_per_identifier" as const, max_attempts: 5 };
      const updated = await admin.attackProtection.bruteForceProtection.update(want);
      expect(updated).toMatchObject(want);
      expect(await admin.attackProtection.bruteForceProtection.get()).toMatchObject(want);
      expect(await statusOf(admin.attackProtection.bruteForceProtection.update({ shields: ["nope" as never] }))).toBe(400);
      expect(await statusOf(admin.attackProtection.bruteForceProtection.update({ max_attempts: 0 }))).toBe(400);
      expect(await statusOf(admin.attackProtection.bruteForceProtection.update({ allowlist: ["not-an-ip"] }))).toBe(400);
      await admin.attackProtection.bruteForceProtection.update({
        enabled: before.enabled,
        shields: before.shields,
        allowlist: before.allowlist,
        mode: before.mode,
        max_attempts: before.max_attempts,
      });
    });

    it("suspiciousIpThrottling.get returns the documented shape", async () => {
      const s = await admin.attackProtection.suspiciousIpThrottling.get();
      expect(typeof s.enabled).toBe("boolean");
      expect(s.shields).toEqual(expect.any(Array));
      for (const x of s.shields ?? []) expect(["block", "admin_notification"]).toContain(x);
      expect(s.allowlist).toEqual(expect.any(Array));
      expect(s.stage?.["pre-login"]).toMatchObject({ max_attempts: expect.any(Number), rate: expect.any(Number) });
      expect(s.stage?.["pre-user-registration"]).toMatchObject({ max_attempts: expect.any(Number), rate: expect.any(Number) });
    });

    it("suspiciousIpThrottling.update round-trips (docs example body); invalid values are 400", async () => {
      const before = await admin.attackProtection.suspiciousIpThrottling.get();
      const want = {
        enabled: true,
        shields: ["block" as const, "admin_notification" as const],
        allowlist: ["127.0.0.1", "10.0.0.0/8"],
        stage: { "pre-login": { max_attempts: 100, rate: 864000 }, "pre-user-registration": { max_attempts: 50, rate: 1728000 } },
      };
      const updated = await admin.attackProtection.suspiciousIpThrottling.update(want);
      expect(updated).toMatchObject(want);
      expect(await admin.attackProtection.suspiciousIpThrottling.get()).toMatchObject(want);
      // A partial PATCH keeps the rest.
      const partial = await admin.attackProtection.suspiciousIpThrottling.update({ stage: { "pre-login": { max_attempts: 10 } } });
      expect(partial.allowlist).toEqual(want.allowlist);
      expect(partial.stage?.["pre-login"]?.max_attempts).toBe(10);
      expect(await statusOf(admin.attackProtection.suspiciousIpThrottling.update({ shields: ["user_notification" as never] }))).toBe(400);
      expect(await statusOf(admin.attackProtection.suspiciousIpThrottling.update({ allowlist: ["not-an-ip"] }))).toBe(400);
      await admin.attackProtection.suspiciousIpThrottling.update({ enabled: before.enabled, shields: before.shields, allowlist: before.allowlist, stage: before.stage });
    });
  });

  // ---------------------------------------------------------------- user blocks
  describe("userBlocks", () => {
    const carol = { email: `carol-${run}@example.com`, password: `Pw-${crypto.randomUUID()}`, id: "" };

    beforeAll(async () => {
      carol.id = String((await admin.users.create({ connection: DB, email: carol.email, password: carol.password, email_verified: true })).user_id);
    });

    async function lockCarol() {
      const bf = await admin.attackProtection.bruteForceProtection.get();
      const n = Math.max(3, Number(bf.max_attempts ?? 3)) + 1;
      let last = 0;
      for (let i = 0; i < n; i++) last = (await coAuthenticate({ email: carol.email, password: "wrong-password" })).status;
      return last;
    }

    it("userBlocks.list / listByIdentifier are empty for an unblocked user", async () => {
      expect(await admin.userBlocks.list(carol.id)).toEqual({ blocked_for: [] });
      expect(await admin.userBlocks.list(carol.id, { consider_brute_force_enablement: true })).toEqual({ blocked_for: [] });
      expect(await admin.userBlocks.listByIdentifier({ identifier: carol.email })).toEqual({ blocked_for: [] });
    });

    it("failed logins block; userBlocks.list and listByIdentifier show {identifier, ip, connection}", async () => {
      expect(await lockCarol()).toBe(403);
      expect((await coAuthenticate(carol)).status).toBe(403);
      const byId = await admin.userBlocks.list(carol.id);
      expect(byId.blocked_for).toEqual([expect.objectContaining({ identifier: carol.email, connection: DB })]);
      const byIdent = await admin.userBlocks.listByIdentifier({ identifier: carol.email, consider_brute_force_enablement: true });
      expect(byIdent.blocked_for).toEqual([expect.objectContaining({ identifier: carol.email, connection: DB })]);
    });

    it("user block entries carry the blocked ip (UserBlockIdentifier.ip; default mode count_per_identifier_and_ip)", async () => {
      const byId = await admin.userBlocks.list(carol.id);
      expect(byId.blocked_for?.[0]?.ip).toEqual(expect.any(String));
    });

    it("userBlocks.deleteByIdentifier unblocks; the user logs in again", async () => {
      await admin.userBlocks.deleteByIdentifier({ identifier: carol.email });
      expect((await admin.userBlocks.listByIdentifier({ identifier: carol.email })).blocked_for).toEqual([]);
      expect((await coAuthenticate(carol)).status).toBe(200);
    });

    it("userBlocks.delete(id) unblocks", async () => {
      expect(await lockCarol()).toBe(403);
      expect((await admin.userBlocks.list(carol.id)).blocked_for?.length).toBe(1);
      await admin.userBlocks.delete(carol.id);
      expect((await admin.userBlocks.list(carol.id)).blocked_for).toEqual([]);
      expect((await coAuthenticate(carol)).status).toBe(200);
    });

    it("userBlocks on an unknown user id is 404; listByIdentifier without identifier is 400", async () => {
      expect(await statusOf(admin.userBlocks.list("auth0|nobody-here"))).toBe(404);
      expect(await statusOf(admin.userBlocks.delete("auth0|nobody-here"))).toBe(404);
      expect(await statusOf(admin.userBlocks.listByIdentifier({ identifier: "" }))).toBe(400);
    });
  });

  // ---------------------------------------------------------------- jobs
  describe("jobs", () => {
    const imported = { email: `imp-${run}@example.com`, password: `Legacy-${run}` };


    async function settled(id: string) {
      for (let i = 0; i < 160; i++) {
        const job = await admin.jobs.get(id);
        if (job.status === "completed" || job.status === "failed") return job;
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(`job ${id} did not settle`);
    }

    it("jobs.usersImports.create (JSON with a bcrypt hash) -> jobs.get completed with summary -> jobs.errors.get", async () => {
      const rows = [
        { email: imported.email, email_verified: true, user_id: `imp-${run}`, password_hash: bcrypt.hashSync(imported.password, 8), user_metadata: { plan: "gold" } },
        { email: `imp2-${run}@example.com`, custom_password_hash: { algorithm: "bcrypt", hash: { value: bcrypt.hashSync("Other-Pw-1", 4) } } },
        { email: `bad-${run}@example.com`, custom_password_hash: { algorithm: "md5", hash: { value: "5f4dcc3b5aa765d61d8327deb882cf99" } } },
      ];
      const job = await admin.jobs.usersImports.create({
        users: new File([JSON.stringify(rows)], "users.json", { type: "application/json" }),
        connection_id: connectionId,
        upsert: false,
        external_id: `walk-${run}`,
        send_completion_email: false,
      });
      expect(job).toMatchObject({ status: "pending", type: "users_import", connection_id: connectionId, external_id: `walk-${run}`, id: expect.any(String), created_at: expect.any(String) });

      const done = await settled(job.id);
      expect(done).toMatchObject({ id: job.id, type: "users_import", status: "completed", connection_id: connectionId, summary: { inserted: 2, updated: 0, failed: 1, total: 3 } });
      const errors = await admin.jobs.errors.get(job.id);
      expect(Array.isArray(errors)).toBe(true);
      expect(errors).toEqual([{ user: expect.objectContaining({ email: `bad-${run}@example.com` }), errors: [expect.objectContaining({ code: expect.any(String), message: expect.any(String) })] }]);
      const co = await coAuthenticate(imported);
      expect(co.status).toBe(200);
    });

    it("jobs.usersImports.create with upsert=true updates an existing user", async () => {
      const job = await admin.jobs.usersImports.create({
        users: new File([JSON.stringify([{ email: imported.email, user_id: `imp-${run}`, given_name: "Updated" }])], "users.json", { type: "application/json" }),
        connection_id: connectionId,
        upsert: true,
      });
      const done = await settled(job.id);
      expect(done.summary).toMatchObject({ inserted: 0, updated: 1, failed: 0, total: 1 });
    });

    it("jobs.usersImports.create rejects a non-JSON file / unknown connection with 400", async () => {
      expect(await statusOf(admin.jobs.usersImports.create({ users: new File(["not json"], "users.json", { type: "application/json" }), connection_id: connectionId }))).toBe(400);
      expect(await statusOf(admin.jobs.usersImports.create({ users: new File(["[]"], "users.json", { type: "application/json" }), connection_id: "con_doesnotexist" }))).toBe(400);
    });

    it("jobs.errors.get on a job without errors answers 204, which the SDK returns as undefined (its type: ErrorsGetResponse | undefined)", async () => {
      const job = await admin.jobs.usersImports.create({
        users: new File([JSON.stringify([{ email: `clean-${run}@example.com` }])], "users.json", { type: "application/json" }),
        connection_id: connectionId,
      });
      await settled(job.id);
      const res = await admin.jobs.errors.get(job.id).withRawResponse();
      expect(res.rawResponse.status).toBe(204);
      expect(res.data).toBeUndefined();
    });

    it("jobs.get / jobs.errors.get on an unknown id are 404", async () => {
      expect(await statusOf(admin.jobs.get("job_doesnotexist"))).toBe(404);
      expect(await statusOf(admin.jobs.errors.get("job_doesnotexist"))).toBe(404);

    });

    it("jobs.usersExports.create (json, fields with export_as, connection_id, limit) produces a gzipped JSON-lines file", async () => {
      const job = await admin.jobs.usersExports.create({
        connection_id: connectionId,
        format: "json",
        limit: 2,
        fields: [{ name: "user_id" }, { name: "email", export_as: "mail" }, { name: "user_metadata.plan", export_as: "plan" }],
      });
      expect(job).toMatchObject({ type: "users_export", status: "pending", id: expect.any(String), connection_id: connectionId, format: "json", limit: 2 });
      const done = await settled(job.id);
      expect(done).toMatchObject({ status: "completed", format: "json", location: expect.any(String) });
      const res = await fetch(String(done.location));
      expect(res.status).toBe(200);
      const lines = gunzipSync(Buffer.from(await res.arrayBuffer())).toString("utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.length).toBe(2);
      for (const l of lines) {
        expect(l).toHaveProperty("mail");
        expect(l).not.toHaveProperty("email");
      }
    });

    it("jobs.usersExports.create (csv) produces a gzipped CSV with a header row", async () => {
      const job = await admin.jobs.usersExports.create({ format: "csv", fields: [{ name: "user_id" }, { name: "email" }] });
      const done = await settled(job.id);
      expect(done).toMatchObject({ status: "completed", format: "csv" });
      const text = gunzipSync(Buffer.from(await (await fetch(String(done.location))).arrayBuffer())).toString("utf8");
      expect(text.split("\n")[0]?.replace(/"/g, "").trim()).toBe("user_id,email");
      expect(text).toContain(alice.email);
    });

    it("the users-export JSON lines resolve nested field names (user_metadata.plan -> plan)", async () => {
      const job = await admin.jobs.usersExports.create({ connection_id: connectionId, format: "json", fields: [{ name: "email" }, { name: "user_metadata.plan", export_as: "plan" }] });
      const done = await settled(job.id);
      const lines = gunzipSync(Buffer.from(await (await fetch(String(done.location))).arrayBuffer())).toString("utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.find((l) => l.email === imported.email)).toMatchObject({ plan: "gold" });
    });

    it("jobs.verificationEmail.create returns a verification_email job; unknown user is 404 / 400", async () => {
      const user = await admin.users.create({ connection: DB, email: `verify-${run}@example.com`, password: `Pw-${crypto.randomUUID()}` });
      const job = await admin.jobs.verificationEmail.create({ user_id: String(user.user_id), client_id: app.client_id });
      expect(job).toMatchObject({ type: "verification_email", status: "pending", id: expect.any(String), created_at: expect.any(String) });
      const done = await settled(job.id);
      expect(done).toMatchObject({ type: "verification_email", status: "completed" });
      const withIdentity = await admin.jobs.verificationEmail.create({ user_id: String(user.user_id), identity: { user_id: String(user.user_id).split("|")[1] as string, provider: "auth0" } });
      expect(withIdentity.type).toBe("verification_email");
      expect([400, 404]).toContain(await statusOf(admin.jobs.verificationEmail.create({ user_id: "auth0|nobody-here" })));
    });
  });

  it("clients.create accepts allowed_origins (CreateClientRequestContent.allowed_origins, documented client field)", async () => {
    const c = await admin.clients.create({ name: `origins-${run}`, app_type: "spa", callbacks: [callback], allowed_origins: [origin] });
    expect(c.allowed_origins).toEqual([origin]);
  });

  // ---------------------------------------------------------------- signing keys
  describe("keys.signing", () => {
    let stale: ManagementClient;
    it("list / get return SigningKeys with cert, pkcs7, fingerprint, thumbprint and flags; unknown kid 404", async () => {
      const keys = await admin.keys.signing.list();
      expect(keys.length).toBeGreaterThanOrEqual(1);
      const current = keys.find((k) => k.current);
      expect(current).toBeTruthy();
      for (const k of keys) {
        expect(k.cert).toMatch(/^-----BEGIN CERTIFICATE-----/);
        expect(k.pkcs7).toMatch(/^-----BEGIN PKCS7-----/);
        expect(k.fingerprint).toMatch(/^([0-9A-F]{2}:){19}[0-9A-F]{2}$/);
        expect(k.thumbprint).toBe(k.fingerprint.replace(/:/g, "")); // docs example: fingerprint "CC:FB:…", thumbprint "CCFB…"
        expect(typeof k.kid).toBe("string");
        for (const f of ["d", "p", "q", "private_key", "pkcs8"]) expect(k).not.toHaveProperty(f);
      }
      expect(typeof current?.current_since).toBe("string");
      const got = await admin.keys.signing.get(String(current?.kid));
      expect(got).toMatchObject({ kid: current?.kid, cert: current?.cert, current: true });
      expect(await statusOf(admin.keys.signing.get("nope-kid"))).toBe(404);
    });

    it("rotate returns {cert, kid}; the old key becomes previous; revoke(previous) returns {cert, kid}", async () => {
      const before = (await admin.keys.signing.list()).find((k) => k.current);
      const rotated = await admin.keys.signing.rotate();
      expect(rotated).toEqual({ cert: expect.stringMatching(/^-----BEGIN CERTIFICATE-----/), kid: expect.any(String) });
      const after = await admin.keys.signing.list();
      expect(after.find((k) => k.current)?.kid).toBe(rotated.kid);
      const prev = after.find((k) => k.kid === before?.kid);
      expect(prev).toMatchObject({ previous: true, current: false });
      expect(typeof prev?.current_until).toBe("string");
      const revoked = await admin.keys.signing.revoke(String(before?.kid));
      expect(revoked).toEqual({ cert: before?.cert, kid: before?.kid });
      const jwks = (await (await fetch(`${server.baseUrl}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> };
      expect(jwks.keys.map((k) => k.kid)).not.toContain(before?.kid);
      // The SDK's cached management token was signed by the revoked key: keep it for the next check, continue with a new client.
      stale = admin;
      admin = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
      const got2 = await admin.keys.signing.get(String(before?.kid));
      expect(got2).toMatchObject({ revoked: true });
      expect(typeof got2.revoked_at).toBe("string");
    });

    it("a management token signed by a revoked key is refused (SPEC §4.2: 403 invalid_token; only a missing token is 401)", async () => {
      expect(stale).toBeTruthy();
      expect(await statusOf(stale.keys.signing.list())).toBe(403);
      const res = await fetch(`${server.baseUrl}/api/v2/keys/signing`, { headers: { authorization: "Bearer not-a-jwt" } });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { errorCode: string }).errorCode).toBe("invalid_token");
      expect((await fetch(`${server.baseUrl}/api/v2/keys/signing`)).status).toBe(401);
    });

    it("SAML metadata (/samlp/metadata/{client_id}) is served with the current signing certificate", async () => {
      const current = (await admin.keys.signing.list()).find((k) => k.current);
      const res = await fetch(`${server.baseUrl}/samlp/metadata/${app.client_id}`);
      expect(res.status).toBe(200);
      const xml = await res.text();
      expect(xml).toContain("EntityDescriptor");
      expect(xml).toContain("IDPSSODescriptor");
      const certBody = String(current?.cert).replace(/-----[A-Z ]+-----|\s/g, "");
      expect(xml.replace(/\s/g, "")).toContain(certBody);
      expect((await fetch(`${server.baseUrl}/samlp/metadata/nope-client`)).status).toBe(404);
    });

    it("revoke on an unknown kid is 404", async () => {
      expect(await statusOf(admin.keys.signing.revoke("nope-kid"))).toBe(404);
    });

    // Last: Gatehouse revokes the current key together with an immediate replacement ("rotate & revoke"); the
    // reference documents rotating first (auth0.com/docs/get-started/tenant-settings/signing-keys/revoke-signing-keys).
    it("keys.signing.revoke on the CURRENT key rotates and revokes at once; a fresh management client still works", async () => {
      const current = (await admin.keys.signing.list()).find((k) => k.current);
      const revoked = await admin.keys.signing.revoke(String(current?.kid));
      expect(revoked).toEqual({ cert: current?.cert, kid: current?.kid });
      const fresh = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
      const keys = await fresh.keys.signing.list();
      const now = keys.find((k) => k.current);
      expect(now?.kid).not.toBe(current?.kid);
      expect(now?.revoked).toBe(false);
      expect(keys.find((k) => k.kid === current?.kid)).toMatchObject({ revoked: true, current: false });
    });
  });

});
