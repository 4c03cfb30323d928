import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { call, createTenant, env, mgmt } from "../helpers/api";
import { authorize, pkce, redirectParams, seedClient, seedUser, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";
import { flushCodeShards, logsOf, tenantSql } from "../helpers/outbox";
import { MAX_SEALED_CODE_LENGTH, openCode, sealCode } from "../../src/worker/oauth/tokens/sealed-code";
import { codeShardName } from "../../src/shared/object-names";
import { CodeExchanges } from "../../src/objects/tenant/login/code-exchanges";

/**
 * Issue 31: the code exchange leaves the tenant object's write path. A code carries its own facts, sealed by
 * the worker (AES-256-GCM, the tenant's id as additional data); its single use and its `seacft` event are one
 * transaction in the tenant's code shard its id names; the tenant is only read at the exchange (the user
 * blocked or deleted since, the session revoked since, the permissions now). These tests hold the guarantees
 * the stored code gave: redeemed exactly once, a replay refused and what it issued revoked, a mismatched
 * request never burning it, a forged, altered, expired or foreign code refused, and every exchange logged.
 */

const CALLBACK = "https://app.example.com/callback";
let tenant: string;
let other: string;
let host: string;
let client: TestClient;
let second: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  other = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant, { callbacks: [CALLBACK], grant_types: ["authorization_code", "refresh_token"] });
  second = await seedClient(tenant, { callbacks: [CALLBACK] });
});

/** A signed-in user and a function that gets a fresh code for them by SSO. */
async function signedIn(extra: Record<string, string> = {}) {
  const user = await seedUser(tenant, `sealed-code-${crypto.randomUUID()}@example.com`);
  const cookie = await sessionCookie(tenant, user.user_id, client.client_id);
  const code = async (more: Record<string, string> = {}) => {
    const res = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access", ...extra, ...more }, { host, cookie });
    const issued = redirectParams(res).query.get("code");
    if (!issued) throw new Error(`no code: ${res.status} ${res.headers.get("location")}`);
    return issued;
  };
  return { user, cookie, code };
}

const exchange = (code: string, fields: Record<string, string> = {}, as: TestClient = client) =>
  tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: as.client_id, client_secret: as.client_secret ?? "", ...fields }, {}, host);

async function refusal(res: Response) {
  expect(res.status).toBe(403);
  return ((await res.json()) as { error_description: string }).error_description;
}

/** The tenant's `feacft` rows dated at or after `since` (ISO). */
const feacftSince = async (since: string) => (await logsOf(tenant, `?q=${encodeURIComponent("type:feacft")}&sort=date:1&per_page=100`)).filter((l) => l.date >= since);

describe("sealed authorization codes (issue 31: no tenant write to issue or redeem a code)", () => {
  it("a code is sealed and stored nowhere in the tenant; it is redeemed once, and its replay is refused and revokes what it issued", async () => {
    const { code } = await signedIn();
    const issued = await code();
    expect(issued.startsWith("ac1.")).toBe(true);
    expect(issued.length).toBeLessThanOrEqual(MAX_SEALED_CODE_LENGTH);
    expect(await tenantSql(tenant, "SELECT count(*) AS n FROM authorization_codes")).toEqual([{ n: 0 }]);
    const first = await exchange(issued);
    expect(first.status).toBe(200);
    const tokens = (await first.json()) as { access_token: string; refresh_token: string };
    expect(tokens.refresh_token).toBeTruthy();
    expect((await call("/userinfo", { host, headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200);
    expect(await refusal(await exchange(issued))).toBe("Authorization code has already been used");
    // RFC 6749 §4.1.2: the first exchange's access token and refresh family are revoked.
    expect((await call("/userinfo", { host, headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
    const refreshed = await tokenForm({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: client.client_id, client_secret: client.client_secret ?? "" }, {}, host);
    expect(refreshed.status).toBe(403);
  });

  it("two exchanges of one code at once: one answers tokens, the other invalid_grant", async () => {
    const { code } = await signedIn();
    const issued = await code();
    const answers = await Promise.all([exchange(issued), exchange(issued), exchange(issued)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 403, 403]);
  });

  it("another client, another redirect_uri or a wrong PKCE verifier is refused without burning the code", async () => {
    const { verifier, challenge } = await pkce();
    const { code } = await signedIn({ code_challenge: challenge, code_challenge_method: "S256" });
    const issued = await code();
    expect(await refusal(await exchange(issued, { code_verifier: verifier }, second))).toBe("Invalid authorization code");
    expect(await refusal(await exchange(issued, { code_verifier: verifier, redirect_uri: "https://app.example.com/other" }))).toBe(
      "redirect_uri does not match the one used in the authorization request",
    );
    expect(await refusal(await exchange(issued, { code_verifier: (await pkce()).verifier }))).toBe("Failed to verify code verifier");
    expect(await refusal(await exchange(issued))).toBe("Failed to verify code verifier");
    expect((await exchange(issued, { code_verifier: verifier })).status).toBe(200);
  });

  it("a wrong or missing client secret is refused (invalid_client) before the code is looked at, and does not spend it", async () => {
    const { code } = await signedIn();
    const issued = await code();
    const wrong = await exchange(issued, { client_secret: "not-the-secret" });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: string }).error).toBe("invalid_client");
    const none = await tokenForm({ grant_type: "authorization_code", code: issued, redirect_uri: CALLBACK, client_id: client.client_id }, {}, host);
    expect(none.status).toBe(401);
    expect((await exchange(issued)).status).toBe(200);
  });

  it("an expired, altered, truncated or made-up code, another tenant's, or a sealed login state is refused and logged (feacft)", async () => {
    const { user, code } = await signedIn();
    const since = new Date().toISOString();
    const facts = {
      client_id: client.client_id,
      user_id: user.user_id,
      session_id: null,
      redirect_uri: CALLBACK,
      grant: { scope: "openid", auth_time: Math.floor(Date.now() / 1000) },
      code_challenge: null,
      code_challenge_method: null,
    };
    const expired = (await sealCode(env.ENCRYPTION_KEY, tenant, { ...facts, expires_at: Date.now() - 1 })) as string;
    expect(await refusal(await exchange(expired))).toBe("Authorization code has expired");
    const foreign = (await sealCode(env.ENCRYPTION_KEY, other, { ...facts, expires_at: Date.now() + 60_000 })) as string;
    expect(await refusal(await exchange(foreign))).toBe("Invalid authorization code");
    const issued = await code();
    const parts = issued.split(".");
    const body = parts[3] as string;
    const altered = [...parts.slice(0, 3), `${body.slice(0, 10)}${body[10] === "A" ? "B" : "A"}${body.slice(11)}`].join(".");
    expect(await refusal(await exchange(altered))).toBe("Invalid authorization code");
    expect(await refusal(await exchange(issued.slice(0, -4)))).toBe("Invalid authorization code");
    expect(await refusal(await exchange(`ac1.${"A".repeat(22)}.${"B".repeat(16)}.${"C".repeat(200)}`))).toBe("Invalid authorization code");
    // A sealed login state under the code's prefix: another purpose's key, so it does not open.
    const start = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid" }, { host });
    const state = new URL(start.headers.get("location") ?? "", "http://x").searchParams.get("state") as string;
    expect(state.startsWith("lss1.")).toBe(true);
    expect(await refusal(await exchange(`ac1.${state.slice("lss1.".length)}`))).toBe("Invalid authorization code");
    // None of them burned the genuine code, and each refusal is logged.
    expect((await exchange(issued)).status).toBe(200);
    // Six refusals above, each with its row (the log's dates are milliseconds: none from an earlier test).
    expect((await feacftSince(since)).map((l) => l.type)).toEqual(["feacft", "feacft", "feacft", "feacft", "feacft", "feacft"]);
    expect(await openCode(env.ENCRYPTION_KEY, other, issued)).toBeNull();
    expect((await openCode(env.ENCRYPTION_KEY, tenant, issued))?.user_id).toBe(user.user_id);
  });

  it("a code whose session was revoked since, or whose user was deleted since, is refused", async () => {
    const { user, code } = await signedIn();
    const pending = await code();
    const sessions = await tenantSql<{ id: string }>(tenant, "SELECT id FROM sessions WHERE user_id = ?", user.user_id);
    expect(sessions).toHaveLength(1);
    expect((await mgmt("DELETE", `/sessions/${sessions[0]?.id}`, { headers: { "tenant-id": tenant } })).status).toBe(204);
    expect(await refusal(await exchange(pending))).toBe("Invalid authorization code");
    const gone = await signedIn();
    const orphan = await gone.code();
    expect((await mgmt("DELETE", `/users/${encodeURIComponent(gone.user.user_id)}`, { headers: { "tenant-id": tenant } })).status).toBe(204);
    expect(await refusal(await exchange(orphan))).toBe("The user no longer exists");
  });

  it("a grant too large to seal is stored in the tenant and redeemed once, as every code was before", async () => {
    const { code } = await signedIn();
    const issued = await code({ nonce: "n".repeat(MAX_SEALED_CODE_LENGTH) });
    expect(issued.startsWith("ac1.")).toBe(false);
    expect(await tenantSql(tenant, "SELECT count(*) AS n FROM authorization_codes WHERE consumed_at IS NULL")).toEqual([{ n: 1 }]);
    expect((await exchange(issued)).status).toBe(200);
    expect(await refusal(await exchange(issued))).toBe("Authorization code has already been used");
  });
});

describe("the exchanges' seacft rows (issue 31: batched from the code shards)", () => {
  it("reach /logs through the code shard's own alarm, with nothing run by hand", async () => {
    const { user, code } = await signedIn();
    expect((await exchange(await code())).status).toBe(200);
    let found: string[] = [];
    for (let i = 0; i < 50 && found.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      found = (await logsOf(tenant, `?q=${encodeURIComponent(`type:seacft AND user_id:"${user.user_id}"`)}`)).map((l) => l.type);
    }
    expect(found).toEqual(["seacft"]);
  });

  it("a batch delivered twice writes each row once, and a shard forgets a row only once the tenant has it", async () => {
    const { user, code } = await signedIn();
    const issued = await code();
    const id = (await openCode(env.ENCRYPTION_KEY, tenant, issued))?.id as string;
    expect((await exchange(issued)).status).toBe(200);
    const shard = env.CODES.getByName(codeShardName(tenant, id));
    // The row waits in the shard until delivered (or the alarm delivered it already).
    await flushCodeShards(tenant);
    expect(await shard.pendingLogs()).toBe(0);
    const rows = await logsOf(tenant, `?q=${encodeURIComponent(`type:seacft AND user_id:"${user.user_id}"`)}`);
    expect(rows).toHaveLength(1);
    const log = rows[0] as { log_id: string; date: string; client_id: string | null };
    // Delivered again (a shard that crashed after the tenant's commit and before forgetting the row): one row.
    const entry = { id: log.log_id, at: Date.parse(log.date), client_id: client.client_id, user_id: user.user_id, audit: { actor: { type: "client" as const, id: client.client_id, client_id: client.client_id } } };
    expect(await env.TENANT.getByName(tenant).appendCodeExchanges([entry, entry])).toBe(2);
    expect(await logsOf(tenant, `?q=${encodeURIComponent(`type:seacft AND user_id:"${user.user_id}"`)}`)).toHaveLength(1);
  });
});

describe("a code shard's alarm", () => {
  afterEach(() => setClock());

  it("keeps a batch the tenant did not take and delivers it on a later run: no seacft row is lost", async () => {
    const { user, code } = await signedIn();
    const issued = await code();
    const opened = await openCode(env.ENCRYPTION_KEY, tenant, issued);
    const shard = env.CODES.getByName(codeShardName(tenant, opened?.id as string));
    const seacft = async () => (await logsOf(tenant, `?q=${encodeURIComponent(`type:seacft AND user_id:"${user.user_id}"`)}`)).length;
    // The tenant object refuses the batch (the test pool runs every object in this isolate: its class is patched).
    const original = CodeExchanges.prototype.append;
    CodeExchanges.prototype.append = () => {
      throw new Error("tenant object unavailable");
    };
    try {
      expect((await exchange(issued)).status).toBe(200);
      await runDurableObjectAlarm(shard);
      expect(await shard.pendingLogs()).toBe(1);
    } finally {
      CodeExchanges.prototype.append = original;
    }
    expect(await seacft()).toBe(0);
    await runDurableObjectAlarm(shard);
    expect(await shard.pendingLogs()).toBe(0);
    expect(await seacft()).toBe(1);
  });

  it("forgets a redeemed code once it has expired; its replay is then refused as expired", async () => {
    const { code } = await signedIn();
    const issued = await code();
    const opened = await openCode(env.ENCRYPTION_KEY, tenant, issued);
    expect((await exchange(issued)).status).toBe(200);
    const shard = env.CODES.getByName(codeShardName(tenant, opened?.id as string));
    const redeemed = () => runInDurableObject(shard, (_o, state) => state.storage.sql.exec("SELECT count(*) AS n FROM redeemed_codes WHERE id = ?", opened?.id).one().n);
    await runDurableObjectAlarm(shard);
    expect(await redeemed()).toBe(1);
    setClock(() => (opened?.expires_at as number) + 1);
    await runDurableObjectAlarm(shard);
    expect(await redeemed()).toBe(0);
    expect(await refusal(await exchange(issued))).toBe("Authorization code has expired");
  });
});

describe("sealed codes across tenants", () => {
  it("a code is redeemed in its own tenant's shards only, and does not open at another tenant's host", async () => {
    const { code } = await signedIn();
    const issued = await code();
    const id = (await openCode(env.ENCRYPTION_KEY, tenant, issued))?.id as string;
    expect(codeShardName(tenant, id).startsWith(`${tenant}/codes-`)).toBe(true);
    // The same code at another tenant's host does not open there (the tenant id is the seal's additional data).
    const otherClient = await seedClient(other, { callbacks: [CALLBACK] });
    const elsewhere = await tokenForm(
      { grant_type: "authorization_code", code: issued, redirect_uri: CALLBACK, client_id: otherClient.client_id, client_secret: otherClient.client_secret ?? "" },
      {},
      `${other}.localhost:8787`,
    );
    expect(elsewhere.status).toBe(403);
    expect((await exchange(issued)).status).toBe(200);
  });
});
