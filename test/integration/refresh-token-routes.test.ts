import { env, listDurableObjectIds } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { createTenant, mgmt } from "../helpers/api";
import { seedUser, sessionCookie, type TestClient } from "../helpers/flows";
import { createApi } from "../helpers/management";
import { expectRefused, loginOffline, type RefreshSetup, refreshGrant, refreshSetup, type TokenBody } from "../helpers/refresh";
import { expectError } from "../helpers/roles";
import { expectRefusals, reachKit } from "../helpers/route-reach";

/**
 * The newer refresh-token management routes the reference platform's v7 SDK calls (`client.refreshTokens`):
 * GET /refresh-tokens?user_id= (checkpoint list), PATCH /refresh-tokens/{id} (refresh_token_metadata) and
 * POST /refresh-tokens/revoke (bulk soft revoke of whole families).
 */

let tenant: string;

beforeAll(async () => {
  tenant = await createTenant();
});

interface Listed {
  id: string;
  user_id: string;
  client_id: string;
  refresh_token_metadata?: Record<string, string>;
  revoked_at?: string;
}

const asTenant = (body?: unknown) => ({ headers: { "tenant-id": tenant }, ...(body !== undefined ? { body } : {}) });
const admin = (method: string, path: string, body?: unknown) => mgmt(method, path, asTenant(body));
const refresh = (client: TestClient, token: string) => refreshGrant(tenant, client, token);

async function list(query: string): Promise<{ refresh_tokens: Listed[]; next?: string }> {
  const res = await admin("GET", `/refresh-tokens?${query}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as { refresh_tokens: Listed[]; next?: string };
}

/** The management id of the user's newest live token of one client (the head of its family). */
async function newestId(s: RefreshSetup): Promise<string> {
  const { refresh_tokens } = await list(`user_id=${encodeURIComponent(s.user.user_id)}&client_id=${s.client.client_id}`);
  return refresh_tokens.find((t) => !t.revoked_at)?.id as string;
}

const revoke = (body: unknown) => admin("POST", "/refresh-tokens/revoke", body);

describe("GET /refresh-tokens", () => {
  it("pages a user's tokens by checkpoint across pages, filters by client_id, and selects fields", async () => {
    const a = await refreshSetup(tenant, { leeway: 0 });
    const b = await refreshSetup(tenant, {}, {}, a.user);
    const first = await loginOffline(a);
    await refresh(a.client, first.refresh_token as string); // a rotation adds no listed token: heads only
    await loginOffline(a);
    await loginOffline(b);
    const user = encodeURIComponent(a.user.user_id);

    const page1 = await list(`user_id=${user}&take=2`);
    expect(page1.refresh_tokens).toHaveLength(2);
    expect(page1.next).toBeTruthy();
    const page2 = await list(`user_id=${user}&take=2&from=${encodeURIComponent(page1.next as string)}`);
    expect(page2.refresh_tokens).toHaveLength(1);
    expect(page2.next).toBeUndefined();
    const all = [...page1.refresh_tokens, ...page2.refresh_tokens];
    expect(new Set(all.map((t) => t.id)).size).toBe(3);
    for (const t of all) {
      expect(t).toMatchObject({ user_id: a.user.user_id, rotating: true, refresh_token_metadata: {} });
      for (const hidden of ["token_hash", "family_id", "rotated_to", "rotated_at"]) expect(t).not.toHaveProperty(hidden);
    }
    // The same ids as the user-scoped route shows, so GET/DELETE /refresh-tokens/{id} accept them.
    const byUser = (await (await admin("GET", `/users/${user}/refresh-tokens`)).json()) as Listed[];
    expect(all.map((t) => t.id).sort()).toEqual(byUser.map((t) => t.id).sort());

    // Without from/take it is still a checkpoint page ({refresh_tokens}), never an offset array.
    expect((await list(`user_id=${user}`)).refresh_tokens).toHaveLength(3);
    const ofB = await list(`user_id=${user}&client_id=${b.client.client_id}`);
    expect(ofB.refresh_tokens.map((t) => t.client_id)).toEqual([b.client.client_id]);
    expect((await list(`user_id=${user}&client_id=nobody`)).refresh_tokens).toEqual([]);

    const only = await list(`user_id=${user}&fields=id,client_id&include_fields=true`);
    expect(Object.keys(only.refresh_tokens[0] ?? {}).sort()).toEqual(["client_id", "id"]);
    const without = await list(`user_id=${user}&fields=device,refresh_token_metadata&include_fields=false`);
    expect(without.refresh_tokens[0]).not.toHaveProperty("device");
    expect(without.refresh_tokens[0]).not.toHaveProperty("refresh_token_metadata");
    expect(without.refresh_tokens[0]).toHaveProperty("client_id");
  });

  it("user_id is required (400); an unknown user is 404 as on /users/{id}/refresh-tokens; bad paging is 400", async () => {
    await expectError(await admin("GET", "/refresh-tokens"), 400, "invalid_query_string", /user_id is required/);
    await expectError(await admin("GET", "/refresh-tokens?client_id=x"), 400, "invalid_query_string", /user_id/);
    await expectError(await admin("GET", "/refresh-tokens?user_id=auth0%7Cnobody"), 404, "inexistent_user");
    const a = await refreshSetup(tenant);
    const user = encodeURIComponent(a.user.user_id);
    await expectError(await admin("GET", `/refresh-tokens?user_id=${user}&take=0`), 400, "invalid_query_string");
    await expectError(await admin("GET", `/refresh-tokens?user_id=${user}&take=101`), 400, "invalid_query_string");
    await expectError(await admin("GET", `/refresh-tokens?user_id=${user}&from=garbage`), 400, "invalid_query_string");
    await expectError(await admin("GET", `/refresh-tokens?user_id=${user}&include_fields=maybe`), 400, "invalid_query_string");
  });
});

describe("PATCH /refresh-tokens/{id} (refresh_token_metadata)", () => {
  it("sets metadata, shows it on every read, keeps it across a rotation, and null or {} clears it", async () => {
    const s = await refreshSetup(tenant, { leeway: 0 });
    const tokens = await loginOffline(s);
    const id = await newestId(s);
    const unset = (await (await admin("GET", `/refresh-tokens/${id}`)).json()) as Listed;
    expect(unset.refresh_token_metadata).toEqual({});

    const metadata = { device_name: "Ada's phone", "org-1": "acme" };
    const patched = await admin("PATCH", `/refresh-tokens/${id}`, { refresh_token_metadata: metadata });
    expect(patched.status, await patched.clone().text()).toBe(200);
    expect(await patched.json()).toMatchObject({ id, user_id: s.user.user_id, refresh_token_metadata: metadata });
    expect(((await (await admin("GET", `/refresh-tokens/${id}`)).json()) as Listed).refresh_token_metadata).toEqual(metadata);

    // The refresh grant's successor carries the family's metadata.
    const next = (await (await refresh(s.client, tokens.refresh_token as string)).json()) as TokenBody;
    expect(next.refresh_token).toBeTruthy();
    const successor = await newestId(s);
    expect(successor).not.toBe(id);
    expect(((await (await admin("GET", `/refresh-tokens/${successor}`)).json()) as Listed).refresh_token_metadata).toEqual(metadata);
    const listed = (await list(`user_id=${encodeURIComponent(s.user.user_id)}`)).refresh_tokens;
    expect(listed.map((t) => t.refresh_token_metadata)).toEqual([metadata]);
    // ... and so does the one after it, after a change made through the successor's id (the underscore alias).
    expect((await admin("PATCH", `/refresh_tokens/${successor}`, { refresh_token_metadata: { k: "v2" } })).status).toBe(200);
    const third = (await (await refresh(s.client, next.refresh_token as string)).json()) as TokenBody;
    expect(third.refresh_token).toBeTruthy();
    expect(((await (await admin("GET", `/refresh-tokens/${await newestId(s)}`)).json()) as Listed).refresh_token_metadata).toEqual({ k: "v2" });

    const head = await newestId(s);
    const cleared = (await (await admin("PATCH", `/refresh-tokens/${head}`, { refresh_token_metadata: null })).json()) as Listed;
    expect(cleared.refresh_token_metadata).toEqual({});
    await admin("PATCH", `/refresh-tokens/${head}`, { refresh_token_metadata: { a: "b" } });
    const emptied = (await (await admin("PATCH", `/refresh-tokens/${head}`, { refresh_token_metadata: {} })).json()) as Listed;
    expect(emptied.refresh_token_metadata).toEqual({});
  });

  it("refuses bad metadata with 400 invalid_body and writes nothing", async () => {
    const s = await refreshSetup(tenant);
    await loginOffline(s);
    const id = await newestId(s);
    const kept = { keep: "me" };
    expect((await admin("PATCH", `/refresh-tokens/${id}`, { refresh_token_metadata: kept })).status).toBe(200);
    const bad: Array<[unknown, RegExp]> = [
      [{ refresh_token_metadata: Object.fromEntries(Array.from({ length: 26 }, (_, i) => [`k${i}`, "v"])) }, /At most 25/],
      [{ refresh_token_metadata: { "bad key": "v" } }, /letters, digits/],
      [{ refresh_token_metadata: { "clé": "v" } }, /letters, digits/],
      [{ refresh_token_metadata: { ["k".repeat(256)]: "v" } }, /letters, digits/],
      [{ refresh_token_metadata: { k: "x".repeat(256) } }, /at most 255/],
      [{ refresh_token_metadata: { k: 5 } }, /must be strings/],
      [{ refresh_token_metadata: { k: { nested: "x" } } }, /must be strings/],
      [{ refresh_token_metadata: "text" }, /object of string values/],
      [{ refresh_token_metadata: ["a"] }, /object of string values/],
      [{ refresh_token_metadata: { a: "b" }, device: {} }, /Additional properties not allowed: device/],
      [{}, /at least one property/],
      ['{"refresh_token_metadata":{"__proto__":"x"}}', /__proto__/],
      ['{"refresh_token_metadata": {', /Invalid JSON/],
      ["[]", /Payload validation error/],
    ];
    for (const [body, message] of bad) {
      await expectError(await admin("PATCH", `/refresh-tokens/${id}`, body), 400, "invalid_body", message);
    }
    // Exactly 25 properties and 255-character keys and values are within the limits.
    const full = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`${"k".repeat(250)}${i}`, "x".repeat(255)]));
    const max = await admin("PATCH", `/refresh-tokens/${id}`, { refresh_token_metadata: full });
    expect(max.status, await max.clone().text()).toBe(200);
    expect((await admin("PATCH", `/refresh-tokens/${id}`, { refresh_token_metadata: kept })).status).toBe(200);
    expect(((await (await admin("GET", `/refresh-tokens/${id}`)).json()) as Listed).refresh_token_metadata).toEqual(kept);
  });

  it("an unknown, malformed or revoked token is 404 inexistent_refresh_token", async () => {
    const s = await refreshSetup(tenant);
    await loginOffline(s);
    const id = await newestId(s);
    const body = { refresh_token_metadata: { a: "b" } };
    await expectError(await admin("PATCH", "/refresh-tokens/garbage", body), 404, "inexistent_refresh_token");
    await expectError(await admin("PATCH", `/refresh-tokens/rt_${"0".repeat(22)}.${id.split(".")[1]}`, body), 404, "inexistent_refresh_token");
    expect((await admin("DELETE", `/users/${encodeURIComponent(s.user.user_id)}/refresh-tokens`)).status).toBe(204);
    await expectError(await admin("PATCH", `/refresh-tokens/${id}`, body), 404, "inexistent_refresh_token");
    // The soft-revoked token still reads (revoked_at), with its metadata untouched.
    const read = (await (await admin("GET", `/refresh-tokens/${id}`)).json()) as Listed;
    expect(read.revoked_at).toBeTruthy();
    expect(read.refresh_token_metadata).toEqual({});
  });
});

describe("POST /refresh-tokens/revoke", () => {
  it("ids: revokes each named token's whole family (202); others keep working; unknown ids are passed over", async () => {
    const s = await refreshSetup(tenant, { leeway: 30 });
    const first = await loginOffline(s);
    const firstId = await newestId(s);
    // Rotate: the id read before the rotation still names the family, successor included.
    const successor = (await (await refresh(s.client, first.refresh_token as string)).json()) as TokenBody;
    const other = await loginOffline(s);
    const res = await revoke({ ids: [firstId, "garbage", `rt_${"1".repeat(22)}.${firstId.split(".")[1]}`] });
    expect(res.status, await res.clone().text()).toBe(202);
    expect(await res.text()).toBe("");
    await expectRefused(await refresh(s.client, successor.refresh_token as string), "Refresh token has been revoked");
    await expectRefused(await refresh(s.client, first.refresh_token as string), "Refresh token has been revoked");
    expect((await refresh(s.client, other.refresh_token as string)).status).toBe(200);
  });

  it("ids or a token id naming no account of the tenant make no user object (nothing to revoke, 404 on PATCH)", async () => {
    const ghost = `auth0|ghost${crypto.randomUUID().slice(0, 8)}`;
    const ghostId = `rt_${"2".repeat(22)}.${btoa(ghost).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
    const objectId = env.USER.idFromName(`${tenant}/${ghost}`).toString();
    const stored = async () => (await listDurableObjectIds(env.USER)).map((id) => id.toString());
    expect((await revoke({ ids: [ghostId] })).status).toBe(202);
    expect((await admin("PATCH", `/refresh-tokens/${ghostId}`, { refresh_token_metadata: { a: "b" } })).status).toBe(404);
    expect((await admin("GET", `/refresh-tokens/${ghostId}`)).status).toBe(404);
    expect(await stored()).not.toContain(objectId);
  });

  it("ids across users: each user's named tokens go, in one call", async () => {
    const a = await refreshSetup(tenant);
    const b = await refreshSetup(tenant);
    const ta = await loginOffline(a);
    const tb = await loginOffline(b);
    const keep = await loginOffline(b);
    const ids = [await newestId(a), (await list(`user_id=${encodeURIComponent(b.user.user_id)}`)).refresh_tokens[1]?.id as string];
    expect((await revoke({ ids })).status).toBe(202);
    await expectRefused(await refresh(a.client, ta.refresh_token as string), "Refresh token has been revoked");
    await expectRefused(await refresh(b.client, tb.refresh_token as string), "Refresh token has been revoked");
    expect((await refresh(b.client, keep.refresh_token as string)).status).toBe(200);
  });

  it("user_id: every token of the user, soft (revoked_at shows); another user's tokens keep working", async () => {
    const a = await refreshSetup(tenant);
    const a2 = await refreshSetup(tenant, {}, {}, a.user);
    const b = await refreshSetup(tenant);
    const ta = await loginOffline(a);
    const ta2 = await loginOffline(a2);
    const tb = await loginOffline(b);
    expect((await revoke({ user_id: a.user.user_id })).status).toBe(202);
    await expectRefused(await refresh(a.client, ta.refresh_token as string), "Refresh token has been revoked");
    await expectRefused(await refresh(a2.client, ta2.refresh_token as string), "Refresh token has been revoked");
    expect((await refresh(b.client, tb.refresh_token as string)).status).toBe(200);
    const listed = (await list(`user_id=${encodeURIComponent(a.user.user_id)}`)).refresh_tokens;
    expect(listed).toHaveLength(2);
    expect(listed.every((t) => t.revoked_at)).toBe(true);
    // An unknown user holds nothing to revoke: accepted all the same.
    expect((await revoke({ user_id: "auth0|nobody-at-all" })).status).toBe(202);
  });

  it("client_id alone: every user's tokens of that application are revoked (whatever they rotated to); other applications' and later logins' keep working", async () => {
    const a = await refreshSetup(tenant, { rotation_type: "rotating", leeway: 0 });
    const other = await seedUser(tenant, `rt-${crypto.randomUUID().slice(0, 8)}@example.com`);
    const b = { ...a, user: other, cookie: await sessionCookie(tenant, other.user_id, a.client.client_id) };
    const elsewhere = await refreshSetup(tenant, {}, {}, a.user);
    const ta = await loginOffline(a);
    // A's token has rotated before the revocation: its successor is a row issued later, same family.
    const rotated = (await (await refresh(a.client, ta.refresh_token as string)).json()) as TokenBody;
    const tb = await loginOffline(b);
    const te = await loginOffline(elsewhere);
    expect((await revoke({ client_id: a.client.client_id })).status).toBe(202);
    // Listed as revoked at once, before any use reaches the family.
    const listed = await list(`user_id=${encodeURIComponent(b.user.user_id)}&client_id=${a.client.client_id}`);
    expect(listed.refresh_tokens.length).toBeGreaterThan(0);
    expect(listed.refresh_tokens.every((t) => typeof t.revoked_at === "string")).toBe(true);
    await expectRefused(await refresh(a.client, rotated.refresh_token as string), "Refresh token has been revoked");
    await expectRefused(await refresh(b.client, tb.refresh_token as string), "Refresh token has been revoked");
    expect((await refresh(elsewhere.client, te.refresh_token as string)).status).toBe(200);
    // A login after the revocation starts a family that works.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const fresh = await loginOffline(a);
    expect((await refresh(a.client, fresh.refresh_token as string)).status).toBe(200);
    // The revocation time is internal: the client does not show it.
    const client = (await (await admin("GET", `/clients/${a.client.client_id}`)).json()) as Record<string, unknown>;
    expect(client).not.toHaveProperty("refresh_tokens_revoked_before");
    // An unknown application holds nothing to revoke.
    expect((await revoke({ client_id: "no-such-client" })).status).toBe(202);
  });

  it("user_id + client_id: only that application's tokens of the user", async () => {
    const a = await refreshSetup(tenant);
    const a2 = await refreshSetup(tenant, {}, {}, a.user);
    const ta = await loginOffline(a);
    const ta2 = await loginOffline(a2);
    expect((await revoke({ user_id: a.user.user_id, client_id: a.client.client_id })).status).toBe(202);
    await expectRefused(await refresh(a.client, ta.refresh_token as string), "Refresh token has been revoked");
    expect((await refresh(a2.client, ta2.refresh_token as string)).status).toBe(200);
  });

  it("user_id + client_id + audience: only that application's tokens for that API", async () => {
    const a = await refreshSetup(tenant);
    const api = await createApi(["read:x"], { headers: { "tenant-id": tenant } });
    expect((await admin("PATCH", `/resource-servers/${api.id}`, { allow_offline_access: true })).status).toBe(200);
    const forApi = await loginOffline(a, { audience: api.identifier, scope: "openid offline_access read:x" });
    const plain = await loginOffline(a);
    expect(forApi.refresh_token).toBeTruthy();
    const res = await revoke({ user_id: a.user.user_id, client_id: a.client.client_id, audience: api.identifier });
    expect(res.status).toBe(202);
    await expectRefused(await refresh(a.client, forApi.refresh_token as string), "Refresh token has been revoked");
    expect((await refresh(a.client, plain.refresh_token as string)).status).toBe(200);
    expect((await revoke({ user_id: a.user.user_id, client_id: a.client.client_id, audience: "https://other.example.com/" })).status).toBe(202);
    expect((await refresh(a.client, plain.refresh_token as string)).status).toBe(200);
  });

  it("refuses bad combinations and bodies with 400 invalid_body, revoking nothing", async () => {
    const a = await refreshSetup(tenant);
    const tokens = await loginOffline(a);
    const id = await newestId(a);
    const user_id = a.user.user_id;
    const client_id = a.client.client_id;
    const bad: Array<[unknown, RegExp]> = [
      [{}, /Exactly one of/],
      [{ client_id, audience: "https://api.example.com/" }, /audience requires both/],
      [{ user_id, audience: "https://api.example.com/" }, /audience requires both/],
      [{ ids: [id], user_id }, /ids cannot be combined with user_id/],
      [{ ids: [id], client_id }, /ids cannot be combined with client_id/],
      [{ ids: [] }, /at least one/],
      [{ ids: Array.from({ length: 101 }, () => id) }, /at most 100/],
      [{ ids: [5] }, /expected string/],
      [{ ids: id }, /expected array/],
      [{ user_id: "" }, /Payload validation error/],
      [{ user_id, reason: "x" }, /Additional properties not allowed: reason/],
      ['{"user_id":', /Invalid JSON/],
      ["null", /Payload validation error/],
    ];
    for (const [body, message] of bad) {
      await expectError(await revoke(body), 400, "invalid_body", message);
    }
    expect((await refresh(a.client, tokens.refresh_token as string)).status).toBe(200);
  });
});

describe("who can reach them", () => {
  it("no token 401; lacking the scope, another tenant's, an end user's or a revoked token 403", async () => {
    const kit = await reachKit(["read:refresh_tokens", "update:refresh_tokens", "delete:refresh_tokens"]);
    const s = await refreshSetup(kit.tenant);
    await loginOffline(s);
    const user = encodeURIComponent(s.user.user_id);
    const { refresh_tokens } = (await (await mgmt("GET", `/refresh-tokens?user_id=${user}`, { headers: { "tenant-id": kit.tenant } })).json()) as {
      refresh_tokens: Listed[];
    };
    const id = refresh_tokens[0]?.id as string;
    const refused = { refresh_token_metadata: { refused: "yes" } };
    await expectRefusals(kit, "GET", `/refresh-tokens?user_id=${user}`, "read:refresh_tokens");
    await expectRefusals(kit, "PATCH", `/refresh-tokens/${id}`, "update:refresh_tokens", refused);
    await expectRefusals(kit, "PATCH", `/refresh_tokens/${id}`, "update:refresh_tokens", refused);
    await expectRefusals(kit, "POST", "/refresh-tokens/revoke", "delete:refresh_tokens", { user_id: s.user.user_id });
    const allowed = (method: string, path: string, body?: unknown) => mgmt(method, path, { token: kit.allowed, ...(body !== undefined ? { body } : {}) });
    // Nothing the refused callers sent was written: the token is live and carries no metadata.
    const read = (await (await allowed("GET", `/refresh-tokens/${id}`)).json()) as Listed;
    expect(read.refresh_token_metadata).toEqual({});
    expect(read.revoked_at).toBeUndefined();
    expect((await allowed("GET", `/refresh-tokens?user_id=${user}`)).status).toBe(200);
    expect((await allowed("PATCH", `/refresh-tokens/${id}`, { refresh_token_metadata: { a: "b" } })).status).toBe(200);
    expect((await allowed("POST", "/refresh-tokens/revoke", { user_id: s.user.user_id })).status).toBe(202);
    expect(((await (await allowed("GET", `/refresh-tokens/${id}`)).json()) as Listed).revoked_at).toBeTruthy();
  });
});
