import { describe, expect, it, vi } from "vitest";
import { call, createTenant, mgmt, uniqueId } from "../helpers/api";
import { createClient } from "../helpers/management";
import { createHook, deliveries, hookUrl, outboxRows, relay, tenantSql } from "../helpers/outbox";
import { expectReachability } from "../helpers/reach";

const asTenant = (tenantId: string) => ({ headers: { "tenant-id": tenantId } });
type Hook = { id: string; name: string; trigger_id: string; triggerId: string; url: string; enabled: boolean };

describe("hooks management (webhook kind, SPEC §6.1)", () => {
  it("creates with the reference platform's triggerId or trigger_id, reads, lists by trigger, updates and deletes", async () => {
    const tenantId = await createTenant();
    const res = await mgmt("POST", "/hooks", { ...asTenant(tenantId), body: { name: "my-hook", triggerId: "post-user-login", url: "https://hooks.example.com/a" } });
    expect(res.status).toBe(201);
    const hook = (await res.json()) as Hook;
    expect(hook).toMatchObject({ name: "my-hook", trigger_id: "post-user-login", triggerId: "post-user-login", url: "https://hooks.example.com/a", enabled: true });
    await createHook(tenantId, "post-user-registration", "https://hooks.example.com/b");
    expect(await (await mgmt("GET", `/hooks/${hook.id}`, asTenant(tenantId))).json()).toEqual(hook);
    const listed = (await (await mgmt("GET", "/hooks?triggerId=post-user-login", asTenant(tenantId))).json()) as Hook[];
    expect(listed.map((h) => h.id)).toEqual([hook.id]);

    const patched = await mgmt("PATCH", `/hooks/${hook.id}`, { ...asTenant(tenantId), body: { enabled: false, url: "https://hooks.example.com/c" } });
    expect(await patched.json()).toMatchObject({ id: hook.id, enabled: false, url: "https://hooks.example.com/c" });
    expect(((await (await mgmt("GET", "/hooks?enabled=false", asTenant(tenantId))).json()) as Hook[]).map((h) => h.id)).toEqual([hook.id]);
    expect((await mgmt("DELETE", `/hooks/${hook.id}`, asTenant(tenantId))).status).toBe(204);
    expect((await mgmt("GET", `/hooks/${hook.id}`, asTenant(tenantId))).status).toBe(404);
    expect((await mgmt("DELETE", `/hooks/${hook.id}`, asTenant(tenantId))).status).toBe(404);
  });

  it("accepts the body an SDK of the reference platform sends (script and dependencies are not run), and pages with include_totals", async () => {
    const tenantId = await createTenant();
    const body = { name: "sdk-hook", triggerId: "credentials-exchange", script: "module.exports = () => {}", dependencies: { lodash: "4.17.21" }, url: "https://hooks.example.com/sdk" };
    const res = await mgmt("POST", "/hooks", { ...asTenant(tenantId), body });
    expect(res.status).toBe(201);
    expect(await res.json()).not.toHaveProperty("script");
    await createHook(tenantId, "post-user-login", "https://hooks.example.com/second");
    const page = await mgmt("GET", "/hooks?include_totals=true&per_page=1&page=1", asTenant(tenantId));
    expect(await page.json()).toMatchObject({ start: 1, limit: 1, length: 1, total: 2, hooks: [{ name: "sdk-hook", triggerId: "credentials-exchange" }] });
  });

  it("binding to a trigger the system cannot dispatch is 400, as are bad urls, a missing url and unknown fields", async () => {
    const tenantId = await createTenant();
    const url = "https://hooks.example.com/x";
    const bad = [
      { trigger_id: "post-user-update", url },
      { trigger_id: "post-user-registraton", url },
      { trigger_id: "pre-user-registration", url: "ftp://hooks.example.com/" },
      { trigger_id: "pre-user-registration", url: "https://user:pw@hooks.example.com/" },
      { name: "code-only", triggerId: "pre-user-registration", script: "module.exports = () => {}" },
      { trigger_id: "pre-user-registration", url, secrets: {} },
      { url },
      { trigger_id: "pre-user-registration", url, name: "-bad name-" },
    ];
    for (const body of bad) {
      const res = await mgmt("POST", "/hooks", { ...asTenant(tenantId), body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await res.json()).toMatchObject({ statusCode: 400, error: "Bad Request" });
    }
    const hook = await createHook(tenantId, "post-user-login", url);
    expect((await mgmt("PATCH", `/hooks/${hook.id}`, { ...asTenant(tenantId), body: { trigger_id: "post-user-update" } })).status).toBe(400);
    expect((await mgmt("PATCH", `/hooks/${hook.id}`, { ...asTenant(tenantId), body: {} })).status).toBe(400);
    expect((await mgmt("GET", "/hooks?enabled=maybe", asTenant(tenantId))).status).toBe(400);
  });

  it("who can manage hooks: none 401, missing scope 403, another tenant 403, the right scope succeeds", async () => {
    const body = () => ({ trigger_id: "post-user-login", url: "https://hooks.example.com/r" });
    await expectReachability("POST", () => "/hooks", "create:hooks", 201, body);
    await expectReachability("GET", () => "/hooks", "read:hooks", 200);
    const withHook = async (tenantId: string) => `/hooks/${(await createHook(tenantId, "post-user-login", "https://hooks.example.com/r")).id}`;
    await expectReachability("GET", withHook, "read:hooks", 200);
    await expectReachability("PATCH", withHook, "update:hooks", 200, () => ({ enabled: false }));
    await expectReachability("DELETE", withHook, "delete:hooks", 204);
  });
});

describe("blocking pre-user-registration hook (prepare phase, SPEC §6.1)", () => {
  const signup = (tenantId: string, clientId: string, email: string) =>
    call("/dbconnections/signup", {
      method: "POST",
      host: `${tenantId}.localhost:8787`,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: clientId, email, password: "p4ssw0rd!long", connection: "Username-Password-Authentication" }),
    });

  async function attempt(query: string) {
    const tenantId = await createTenant();
    const client = await createClient({ app_type: "spa", token_endpoint_auth_method: "none" }, asTenant(tenantId));
    const name = uniqueId("pre");
    await createHook(tenantId, "pre-user-registration", hookUrl(name, query));
    const before = (await outboxRows(tenantId)).length;
    const email = `${uniqueId("u")}@example.com`;
    const res = await signup(tenantId, client.client_id, email);
    return { tenantId, name, email, res, before };
  }

  it("a denial body aborts the sign-up with the hook's reason, leaving no user row and no event", async () => {
    const { tenantId, name, email, res, before } = await attempt("deny=Sign-ups%20are%20closed");
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: "access_denied", description: "Sign-ups are closed" });
    expect(await tenantSql(tenantId, "SELECT user_id FROM users WHERE email = ?", email)).toEqual([]);
    expect((await outboxRows(tenantId)).length).toBe(before);
    const [call] = await deliveries(name);
    expect(call?.body).toMatchObject({ trigger_id: "pre-user-registration", tenant_id: tenantId, data: { user: { email } } });
    expect(JSON.stringify(call?.body)).not.toContain("p4ssw0rd");
  });

  it("a non-2xx answer aborts the same way; a 2xx without denial lets the sign-up through", async () => {
    const refused = await attempt("fail=1&status=500");
    expect(refused.res.status).toBe(403);
    expect(await tenantSql(refused.tenantId, "SELECT user_id FROM users WHERE email = ?", refused.email)).toEqual([]);
    expect((await outboxRows(refused.tenantId)).length).toBe(refused.before);

    const allowed = await attempt("");
    expect(allowed.res.status).toBe(200);
    expect(await tenantSql(allowed.tenantId, "SELECT user_id FROM users WHERE email = ?", allowed.email)).toHaveLength(1);
  });
});

describe("blocking validate-registration-username hook (prepare phase, SPEC §6.1)", () => {
  async function usernameTenant(query: string) {
    const tenantId = await createTenant();
    const client = await createClient({ app_type: "spa", token_endpoint_auth_method: "none" }, asTenant(tenantId));
    const created = await mgmt("POST", "/connections", {
      ...asTenant(tenantId),
      body: { name: "named-db", strategy: "auth0", options: { requires_username: true }, enabled_clients: [client.client_id] },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const name = uniqueId("uname");
    await createHook(tenantId, "validate-registration-username", hookUrl(name, query));
    return { tenantId, clientId: client.client_id, name };
  }
  const signup = (tenantId: string, body: Record<string, unknown>) =>
    call("/dbconnections/signup", {
      method: "POST",
      host: `${tenantId}.localhost:8787`,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ password: "p4ssw0rd!long", connection: "named-db", ...body }),
    });

  it("a sign-up's username is sent to the hook first; a denial leaves no user row and no event", async () => {
    const { tenantId, clientId, name } = await usernameTenant("deny=That%20username%20is%20reserved");
    const before = (await outboxRows(tenantId)).length;
    const email = `${uniqueId("u")}@example.com`;
    const res = await signup(tenantId, { client_id: clientId, email, username: "admin" });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: "access_denied", description: "That username is reserved" });
    expect(await tenantSql(tenantId, "SELECT user_id FROM users WHERE email = ?", email)).toEqual([]);
    expect((await outboxRows(tenantId)).length).toBe(before);
    const [delivery] = await deliveries(name);
    expect(delivery?.body).toMatchObject({ trigger_id: "validate-registration-username", tenant_id: tenantId, data: { username: "admin", connection: "named-db" } });
    expect(JSON.stringify(delivery?.body)).not.toContain("p4ssw0rd");
  });

  it("an accepted username is stored and answered; a connection that requires one refuses a sign-up without it", async () => {
    const { tenantId, clientId, name } = await usernameTenant("");
    const email = `${uniqueId("u")}@example.com`;
    const res = await signup(tenantId, { client_id: clientId, email, username: "jane_doe" });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toMatchObject({ email, username: "jane_doe" });
    expect(await tenantSql(tenantId, "SELECT username FROM users WHERE email = ?", email)).toEqual([{ username: "jane_doe" }]);
    expect(await deliveries(name)).toHaveLength(1);
    const missing = await signup(tenantId, { client_id: clientId, email: `${uniqueId("u")}@example.com` });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: "invalid_request", error_description: "username is required for this connection" });
    const taken = await signup(tenantId, { client_id: clientId, email: `${uniqueId("u")}@example.com`, username: "jane_doe" });
    expect(taken.status).toBe(400);
    expect(await taken.json()).toMatchObject({ code: "invalid_signup" });
  });

  it("POST /users with a username runs the hook; a refusal is 400 hook_denied and nothing is written", async () => {
    const { tenantId, name } = await usernameTenant("fail=1&status=500");
    const email = `${uniqueId("u")}@example.com`;
    const res = await mgmt("POST", "/users", { ...asTenant(tenantId), body: { connection: "named-db", email, username: "bob", password: "p4ssw0rd!long" } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ statusCode: 400, errorCode: "hook_denied", message: "The validate-registration-username hook refused (HTTP 500)" });
    expect(await tenantSql(tenantId, "SELECT user_id FROM users WHERE email = ?", email)).toEqual([]);
    expect((await deliveries(name))[0]?.body).toMatchObject({ data: { username: "bob", connection: "named-db" } });
    const withoutUsername = await mgmt("POST", "/users", { ...asTenant(tenantId), body: { connection: "named-db", email: `${uniqueId("u")}@example.com`, password: "p4ssw0rd!long" } });
    expect(withoutUsername.status).toBe(400);
    expect(await deliveries(name)).toHaveLength(1);
  });
});

describe("blocking pre-user-update and pre-user-deletion hooks, post-user-deletion webhook (SPEC §6.1)", () => {
  async function withUser(trigger: string, query: string) {
    const tenantId = await createTenant();
    const email = `${uniqueId("u")}@example.com`;
    const created = await mgmt("POST", "/users", { ...asTenant(tenantId), body: { connection: "Username-Password-Authentication", email, password: "p4ssw0rd!long" } });
    expect(created.status, await created.clone().text()).toBe(201);
    const { user_id: userId } = (await created.json()) as { user_id: string };
    const name = uniqueId(trigger);
    await createHook(tenantId, trigger, hookUrl(name, query));
    return { tenantId, userId, name, path: `/users/${encodeURIComponent(userId)}` };
  }

  it("a pre-user-update denial refuses the PATCH with the hook's reason and leaves the user unchanged", async () => {
    const { tenantId, userId, name, path } = await withUser("pre-user-update", "deny=Profile%20is%20locked");
    const before = (await outboxRows(tenantId)).length;
    const res = await mgmt("PATCH", path, { ...asTenant(tenantId), body: { name: "Renamed", password: "an0ther-p4ssword!" } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ errorCode: "hook_denied", message: "Profile is locked" });
    expect(await tenantSql(tenantId, "SELECT name FROM users WHERE user_id = ?", userId)).not.toEqual([{ name: "Renamed" }]);
    expect((await outboxRows(tenantId)).length).toBe(before);
    const [delivery] = await deliveries(name);
    expect(delivery?.body).toMatchObject({ trigger_id: "pre-user-update", data: { user_id: userId, updates: { name: "Renamed" } } });
    expect(JSON.stringify(delivery?.body)).not.toContain("an0ther-p4ssword");
  });

  it("a pre-user-deletion refusal keeps the user; an allowing hook lets the delete through", async () => {
    const refused = await withUser("pre-user-deletion", "fail=1&status=503");
    const res = await mgmt("DELETE", refused.path, asTenant(refused.tenantId));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ errorCode: "hook_denied", message: "The pre-user-deletion hook refused (HTTP 503)" });
    expect((await mgmt("GET", refused.path, asTenant(refused.tenantId))).status).toBe(200);

    const allowed = await withUser("pre-user-deletion", "");
    expect((await mgmt("DELETE", allowed.path, asTenant(allowed.tenantId))).status).toBe(204);
    expect((await mgmt("GET", allowed.path, asTenant(allowed.tenantId))).status).toBe(404);
    expect((await deliveries(allowed.name))[0]?.body).toMatchObject({ trigger_id: "pre-user-deletion", data: { user_id: allowed.userId } });
  });

  it("a deleted user's post-user-deletion webhook is delivered by the relay with the event id as Idempotency-Key", async () => {
    const { tenantId, userId, name, path } = await withUser("post-user-deletion", "");
    expect((await mgmt("DELETE", path, asTenant(tenantId))).status).toBe(204);
    // The object's own alarm may hold the event's claim when the test's relay pass runs: wait for the delivery.
    await vi.waitFor(
      async () => {
        await relay(tenantId);
        const [delivery] = await deliveries(name);
        expect(delivery?.body).toMatchObject({ event_type: "hook.post-user-deletion", trigger_id: "post-user-deletion", data: { user: { user_id: userId } } });
        expect(delivery?.key).toBe(delivery?.body.id);
      },
      { timeout: 15_000, interval: 250 },
    );
  });
});
