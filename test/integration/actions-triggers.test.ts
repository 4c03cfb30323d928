import { decodeJwt } from "jose";
import { describe, expect, it, vi } from "vitest";
import { call, createTenant, token, uniqueId } from "../helpers/api";
import { bindAction, onTenant, unbindAll } from "../helpers/actions";
import { createApi, createClient, grantClient } from "../helpers/management";
import { fireAlarm, injectClock, logsOf, outboxRows, relay, tenantSql } from "../helpers/outbox";
import { createExecutionContext, env, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { createApp } from "../../src/worker/app";
import type { TenantObject } from "../../src/objects/tenant/tenant-object";

const asTenant = (tenantId: string) => ({ headers: { "tenant-id": tenantId } });

const signup = (tenantId: string, clientId: string, email: string) =>
  call("/dbconnections/signup", {
    method: "POST",
    host: `${tenantId}.localhost:8787`,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_id: clientId, email, password: "p4ssw0rd!long", connection: "Username-Password-Authentication" }),
  });

async function m2m(tenantId: string) {
  const api = await createApi(["read:things"], asTenant(tenantId));
  const client = await createClient({ app_type: "non_interactive", grant_types: ["client_credentials"] }, asTenant(tenantId));
  await grantClient(client.client_id, api.identifier, ["read:things"], asTenant(tenantId));
  const exchange = () =>
    token({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience: api.identifier }, { host: `${tenantId}.localhost:8787` });
  return { api, client, exchange };
}

describe("credentials-exchange actions (SPEC §6.1 inline)", () => {
  it("add custom claims to the service token; gty, scope and sub stay the server's, with a warning", async () => {
    const tenantId = await createTenant();
    const { client, exchange } = await m2m(tenantId);
    await bindAction(
      tenantId,
      "credentials-exchange",
      `exports.onExecuteCredentialsExchange = async (event, api) => {
        api.accessToken.setCustomClaim("https://example.com/client", event.client.name);
        api.accessToken.setCustomClaim("gty", "password");
        api.accessToken.setCustomClaim("scope", "read:everything");
        api.accessToken.setCustomClaim("sub", "root");
      };`,
    );
    const res = await exchange();
    expect(res.status).toBe(200);
    const claims = decodeJwt(((await res.json()) as { access_token: string }).access_token);
    expect(claims).toMatchObject({ "https://example.com/client": client.name, gty: "client-credentials", scope: "read:things", sub: `${client.client_id}@clients` });
    await relay(tenantId);
    const warned = (await logsOf(tenantId, "?q=type:w")).map((w) => (w.details.target as { after: { claim: string } }).after.claim).sort();
    expect(warned).toEqual(["gty", "scope", "sub"]);
  });

  it("a deny answers the action's OAuth error; a throw answers access_denied with its message", async () => {
    const tenantId = await createTenant();
    const { exchange } = await m2m(tenantId);
    await bindAction(tenantId, "credentials-exchange", `exports.onExecuteCredentialsExchange = async (event, api) => { api.access.deny("invalid_scope", "No scopes for you"); };`);
    const denied = await exchange();
    expect(denied.status).toBe(400);
    expect(await denied.json()).toEqual({ error: "invalid_scope", error_description: "No scopes for you" });
    await unbindAll(tenantId, "credentials-exchange");
    await bindAction(tenantId, "credentials-exchange", `exports.onExecuteCredentialsExchange = async () => { throw new Error("vault unreachable"); };`);
    const failed = await exchange();
    expect(failed.status).toBe(403);
    expect(await failed.json()).toEqual({ error: "access_denied", error_description: "vault unreachable" });
  });
});

describe("host option unsafeAllowAzpCustomClaim (SPEC §6.2)", () => {
  it("releases azp, and only azp, to actions when the host sets it", async () => {
    const tenantId = await createTenant();
    const { client, api } = await m2m(tenantId);
    await bindAction(tenantId, "credentials-exchange", `exports.onExecuteCredentialsExchange = async (event, api) => { api.accessToken.setCustomClaim("azp", "custom-azp"); api.accessToken.setCustomClaim("sub", "root"); };`);
    const request = () =>
      new Request("http://localhost:8787/oauth/token", {
        method: "POST",
        headers: { host: `${tenantId}.localhost:8787`, "content-type": "application/json" },
        body: JSON.stringify({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience: api.identifier }),
      });
    const claimsOf = async (app: ReturnType<typeof createApp>) => {
      const ctx = createExecutionContext();
      const res = await app.fetch(request(), env, ctx);
      await waitOnExecutionContext(ctx);
      expect(res.status).toBe(200);
      return decodeJwt(((await res.json()) as { access_token: string }).access_token);
    };
    expect(await claimsOf(createApp())).toMatchObject({ azp: client.client_id, sub: `${client.client_id}@clients` });
    expect(await claimsOf(createApp({ unsafeAllowAzpCustomClaim: true }))).toMatchObject({ azp: "custom-azp", sub: `${client.client_id}@clients` });
  });
});

describe("pre-user-registration actions (SPEC §6.1 prepare phase)", () => {
  it("a deny writes no user and no sign-up event, and shows the action's user message", async () => {
    const tenantId = await createTenant();
    const client = await createClient({ app_type: "spa", token_endpoint_auth_method: "none" }, asTenant(tenantId));
    await bindAction(
      tenantId,
      "pre-user-registration",
      `exports.onExecutePreUserRegistration = async (event, api) => {
        if (event.user.email.endsWith("@blocked.example")) api.access.deny("blocked domain", "Sign-ups from this domain are closed");
      };`,
    );
    const before = (await outboxRows(tenantId)).length;
    const email = `${uniqueId("u")}@blocked.example`;
    const res = await signup(tenantId, client.client_id, email);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: "access_denied", description: "Sign-ups from this domain are closed" });
    expect(await tenantSql(tenantId, "SELECT user_id FROM users WHERE email = ?", email)).toEqual([]);
    expect((await outboxRows(tenantId)).length).toBe(before);
    // Another address still signs up.
    expect((await signup(tenantId, client.client_id, `${uniqueId("u")}@fine.example`)).status).toBe(200);
  });

  it("metadata set by the action is stored with the new user", async () => {
    const tenantId = await createTenant();
    const client = await createClient({ app_type: "spa", token_endpoint_auth_method: "none" }, asTenant(tenantId));
    await bindAction(tenantId, "pre-user-registration", `exports.onExecutePreUserRegistration = async (event, api) => { api.user.setAppMetadata("tier", "free"); api.user.setUserMetadata("source", "signup"); };`);
    const res = await signup(tenantId, client.client_id, `${uniqueId("u")}@example.com`);
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };
    const user = await (await onTenant(tenantId, "GET", `/users/${encodeURIComponent(id)}`)).json();
    expect(user).toMatchObject({ app_metadata: { tier: "free" }, user_metadata: { source: "signup" } });
  });
});

describe("post-user-registration actions through the relay (SPEC §6.2 code hooks)", () => {
  it("a failing action is retried with the same idempotency key (the outbox event id); registration completes after it succeeds", async () => {
    const tenantId = await createTenant();
    const client = await createClient({ app_type: "spa", token_endpoint_auth_method: "none" }, asTenant(tenantId));
    const clock = await injectClock(tenantId);
    await bindAction(tenantId, "post-user-registration", `exports.onExecutePostUserRegistration = async (event) => { console.log(event.idempotency_key, event.user.email); throw new Error("crm down"); };`);
    const email = `${uniqueId("u")}@example.com`;
    const { id: userId } = (await (await signup(tenantId, client.client_id, email)).json()) as { id: string };
    const completed = async () => (await tenantSql<{ at: number | null }>(tenantId, "SELECT registration_completed_at AS at FROM users WHERE user_id = ?", userId))[0]?.at;

    expect(await fireAlarm(tenantId)).toBe(true);
    clock.now += 750;
    await fireAlarm(tenantId);
    const [event] = await outboxRows(tenantId, "hook.post-user-registration");
    expect(event).toMatchObject({ retry_count: 2, processed_at: null });
    expect(event?.error).toContain("crm down");
    expect(await completed()).toBeNull();
    const executions = await tenantSql<{ id: string }>(tenantId, "SELECT id FROM action_executions WHERE trigger_id = 'post-user-registration' ORDER BY created_at");
    expect(executions).toHaveLength(2);
    for (const { id } of executions) {
      const execution = (await (await onTenant(tenantId, "GET", `/actions/executions/${id}`)).json()) as { status: string; results: { logs: string; error: { msg: string } }[] };
      expect(execution.status).toBe("partial");
      expect(execution.results[0]?.logs).toBe(`${event?.id} ${email}\n`);
      expect(execution.results[0]?.error.msg).toBe("crm down");
    }

    // The tenant fixes the action; the next attempt succeeds with the same key and the finalizer runs.
    await unbindAll(tenantId, "post-user-registration");
    await bindAction(tenantId, "post-user-registration", `exports.onExecutePostUserRegistration = async (event) => { console.log(event.idempotency_key); };`);
    clock.now += 1500;
    await fireAlarm(tenantId);
    expect((await outboxRows(tenantId, "hook.post-user-registration"))[0]?.processed_at).toBe(clock.now);
    expect(await completed()).toBe(clock.now);
    const last = await tenantSql<{ results: string }>(tenantId, "SELECT results FROM action_executions WHERE trigger_id = 'post-user-registration' ORDER BY created_at DESC LIMIT 1");
    expect(JSON.parse(last[0]?.results ?? "[]")[0].logs).toBe(`${event?.id}\n`);
  });
});

describe("post-user-deletion actions through the relay (SPEC §6.1)", () => {
  it("run after a user is deleted, with the deleted user and the event's idempotency key", async () => {
    const tenantId = await createTenant();
    await bindAction(tenantId, "post-user-deletion", `exports.onExecutePostUserDeletion = async (event) => { console.log(event.user.email, event.idempotency_key); };`);
    const email = `${uniqueId("gone")}@example.com`;
    const created = await onTenant(tenantId, "POST", "/users", { connection: "Username-Password-Authentication", email, password: "Deleted-pass-123" });
    const { user_id } = (await created.json()) as { user_id: string };
    expect((await onTenant(tenantId, "DELETE", `/users/${encodeURIComponent(user_id)}`)).status).toBe(204);
    // The object's own alarm may hold the event's claim when the test's relay pass runs: wait for its delivery.
    const event = await vi.waitFor(
      async () => {
        await relay(tenantId);
        const [row] = await outboxRows(tenantId, "hook.post-user-deletion");
        expect(row?.processed_at).toEqual(expect.any(Number));
        return row;
      },
      { timeout: 15_000, interval: 250 },
    );
    const [row] = await tenantSql<{ results: string }>(tenantId, "SELECT results FROM action_executions WHERE trigger_id = 'post-user-deletion'");
    expect(JSON.parse(row?.results ?? "[]")[0].logs).toBe(`${email} ${event?.id}\n`);
  });
});

describe("execution retention (SPEC §2.12)", () => {
  it("the object's alarm deletes executions older than 10 days, 1,000 per pass, and keeps newer ones", async () => {
    const tenantId = await createTenant();
    const clock = await injectClock(tenantId);
    const day = 86_400_000;
    await runInDurableObject(env.TENANT.getByName(tenantId), (_o: TenantObject, state) => {
      for (let i = 0; i < 1205; i++) {
        state.storage.sql.exec("INSERT INTO action_executions (id, trigger_id, status, results, created_at, updated_at) VALUES (?, 'post-login', 'final', '[]', ?, ?)", `old_${i}`, clock.now - 10 * day - 3_600_000, clock.now);
      }
      state.storage.sql.exec("INSERT INTO action_executions (id, trigger_id, status, results, created_at, updated_at) VALUES ('recent', 'post-login', 'final', '[]', ?, ?)", clock.now - 9 * day, clock.now);
    });
    await runInDurableObject(env.TENANT.getByName(tenantId), (o: TenantObject) => o.pokeOutbox());
    // One batch of 1,000 per pass: the alarm comes back for the rest.
    expect(await fireAlarm(tenantId)).toBe(true);
    expect((await tenantSql<{ n: number }>(tenantId, "SELECT count(*) AS n FROM action_executions"))[0]?.n).toBe(206);
    expect(await fireAlarm(tenantId)).toBe(true);
    expect(await tenantSql<{ id: string }>(tenantId, "SELECT id FROM action_executions")).toEqual([{ id: "recent" }]);
    expect((await onTenant(tenantId, "GET", "/actions/executions/recent")).status).toBe(200);
    expect((await onTenant(tenantId, "GET", "/actions/executions/old_1")).status).toBe(404);
  });
});
