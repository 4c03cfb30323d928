import { env, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { emitHook } from "../../src/objects/tenant/core/events";
import type { TenantObject } from "../../src/objects/tenant/tenant-object";
import { call, createTenant, mgmt, uniqueId } from "../helpers/api";
import { pendingLogin, seedClient, seedUser, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";
import { createHook, deliveries, flushCodeShards, hookUrl, logsOf, outboxRows, relay, tenantSql } from "../helpers/outbox";

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "correct-horse-9";
let tenant: string;
let host: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant, { callbacks: [CALLBACK] });
});

async function login(email: string, password: string, at = { tenant, client }): Promise<Response> {
  const pending = await pendingLogin(at.tenant, at.client.client_id, { redirect_uri: CALLBACK });
  return call(`/u2/login?state=${pending.state}`, {
    method: "POST",
    host: `${at.tenant}.localhost:8787`,
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: pending.cookie, "user-agent": "login-events/1" },
    body: new URLSearchParams({ _csrf: pending.csrf, email, password }).toString(),
  });
}

describe("login and code-exchange events (SPEC §2.10 log types)", () => {
  it("an unknown user is fu, a wrong password fp, a success s (with client and user), each committed before the answer", async () => {
    const email = `${uniqueId("u")}@example.com`;
    const user = await seedUser(tenant, email, PASSWORD);
    expect((await login(`${uniqueId("nobody")}@example.com`, PASSWORD)).status).toBe(403);
    expect((await login(email, "wrong-password")).status).toBe(403);
    expect((await login(email, PASSWORD)).status).toBe(302);
    await relay(tenant);
    const mine = (await logsOf(tenant, `?q=${encodeURIComponent(`user_id:"${user.user_id}"`)}&sort=date:1`)).map((l) => l.type);
    // seedUser signs the user up (ss) before the logins.
    expect(mine).toEqual(["ss", "fp", "s"]);
    const [fu] = await logsOf(tenant, "?q=type:fu");
    expect(fu).toMatchObject({ type: "fu", client_id: client.client_id, user_id: null, user_agent: "login-events/1" });
    const [s] = await logsOf(tenant, `?q=${encodeURIComponent(`type:s AND user_id:"${user.user_id}"`)}`);
    expect(s).toMatchObject({ client_id: client.client_id, details: { event_type: "user.login", category: "user_action" } });
  });

  it("redeeming a code is seacft; replaying it is feacft", async () => {
    const email = `${uniqueId("u")}@example.com`;
    await seedUser(tenant, email, PASSWORD);
    const res = await login(email, PASSWORD);
    const code = new URL(res.headers.get("location") ?? "").searchParams.get("code") ?? "";
    const params = { grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret ?? "" };
    expect((await tokenForm(params, {}, host)).status).toBe(200);
    expect((await tokenForm(params, {}, host)).status).not.toBe(200);
    await relay(tenant);
    const types = (await logsOf(tenant, `?q=${encodeURIComponent("type:seacft OR type:feacft")}&sort=date:1`)).map((l) => l.type);
    expect(types.slice(-2)).toEqual(["seacft", "feacft"]);
  });

  it("post-user-login goes to its webhooks, and a login of a user whose registration never completed enqueues post-user-registration again", async () => {
    const email = `${uniqueId("u")}@example.com`;
    const user = await seedUser(tenant, email, PASSWORD);
    await relay(tenant);
    const loginHook = uniqueId("login");
    const regHook = uniqueId("reg");
    await createHook(tenant, "post-user-login", hookUrl(loginHook));
    await createHook(tenant, "post-user-registration", hookUrl(regHook));
    const completed = async () => (await tenantSql<{ at: number | null }>(tenant, "SELECT registration_completed_at AS at FROM users WHERE user_id = ?", user.user_id))[0]?.at;
    const enqueued = async () => (await outboxRows(tenant, "hook.post-user-registration")).filter((r) => r.payload.includes(user.user_id)).length;
    expect(await completed()).toEqual(expect.any(Number));

    // A completed registration is not enqueued again by a login.
    const before = await enqueued();
    expect((await login(email, PASSWORD)).status).toBe(302);
    expect(await enqueued()).toBe(before);
    await vi.waitFor(
      async () => {
        await relay(tenant);
        expect((await deliveries(loginHook)).map((d) => d.body.data.user)).toContainEqual(expect.objectContaining({ user_id: user.user_id }));
      },
      { timeout: 15_000, interval: 250 },
    );

    // A registration left unfinished (its finalizer never ran) is enqueued again by the next login.
    await tenantSql(tenant, "UPDATE users SET registration_completed_at = NULL WHERE user_id = ?", user.user_id);
    expect((await login(email, PASSWORD)).status).toBe(302);
    expect(await enqueued()).toBe(before + 1);
    // The object's own alarm may hold the event's claim when the test's relay pass runs: wait for the delivery.
    await vi.waitFor(
      async () => {
        await relay(tenant);
        expect(await completed()).toEqual(expect.any(Number));
      },
      { timeout: 15_000, interval: 250 },
    );
    const [delivery] = await deliveries(regHook);
    expect(delivery).toMatchObject({ status: 200, body: { trigger_id: "post-user-registration", data: { user: { user_id: user.user_id } } } });
  });

  it("a logout ends the session with an slo event for its user", async () => {
    const user = await seedUser(tenant, `${uniqueId("u")}@example.com`, PASSWORD);
    const cookie = await sessionCookie(tenant, user.user_id, client.client_id);
    const res = await call(`/v2/logout?client_id=${client.client_id}`, { host, headers: { cookie }, redirect: "manual" });
    expect(res.status).toBe(302);
    await relay(tenant);
    const [slo] = await logsOf(tenant, `?q=${encodeURIComponent(`type:slo AND user_id:"${user.user_id}"`)}`);
    expect(slo).toMatchObject({ type: "slo", client_id: client.client_id, details: { event_type: "user.logout" } });
  });

  it("hook payloads are redacted like audit events: a secret in app_metadata never reaches a webhook", async () => {
    const user = await seedUser(tenant, `${uniqueId("u")}@example.com`, PASSWORD);
    await tenantSql(tenant, "UPDATE users SET app_metadata = ? WHERE user_id = ?", JSON.stringify({ crm: { api_key: "s3cr3t-crm-key" }, plan: "gold" }), user.user_id);
    const name = uniqueId("meta");
    await createHook(tenant, "post-user-login", hookUrl(name));
    expect((await login(user.email as string, PASSWORD)).status).toBe(302);
    // The object's own alarm may hold the event's claim when the test's relay pass runs: wait for the delivery.
    await vi.waitFor(
      async () => {
        await relay(tenant);
        expect((await deliveries(name)).filter((d) => (d.body.data.user as { user_id: string }).user_id === user.user_id)).not.toEqual([]);
      },
      { timeout: 15_000, interval: 250 },
    );
    const mine = (await deliveries(name)).filter((d) => (d.body.data.user as { user_id: string }).user_id === user.user_id);
    expect(mine).toHaveLength(1);
    expect(JSON.stringify(mine[0]?.body)).not.toContain("s3cr3t-crm-key");
    expect(mine[0]?.body.data.user).toMatchObject({ app_metadata: { crm: { api_key: "[REDACTED]" }, plan: "gold" } });
  });
});

describe("hook events only where a webhook takes them (issue 31)", () => {
  it("a login stores no post-user-login event without an enabled webhook; one enabled later receives the next login's, disabled again none", async () => {
    const own = await createTenant();
    const at = { tenant: own, client: await seedClient(own, { callbacks: [CALLBACK] }) };
    const user = await seedUser(own, `${uniqueId("u")}@example.com`, PASSWORD);
    await relay(own);
    const loginEvents = async () => (await outboxRows(own, "hook.post-user-login")).filter((r) => r.payload.includes(user.user_id));

    expect((await login(user.email as string, PASSWORD, at)).status).toBe(302);
    expect(await loginEvents()).toEqual([]);
    // The login itself is recorded as before: its `s` log event.
    await relay(own);
    expect((await logsOf(own, `?q=${encodeURIComponent(`type:s AND user_id:"${user.user_id}"`)}`)).length).toBe(1);

    const name = uniqueId("later");
    const hook = await createHook(own, "post-user-login", hookUrl(name));
    expect((await login(user.email as string, PASSWORD, at)).status).toBe(302);
    expect(await loginEvents()).toHaveLength(1);
    await vi.waitFor(
      async () => {
        await relay(own);
        expect((await deliveries(name)).map((d) => d.body.data.user)).toEqual([expect.objectContaining({ user_id: user.user_id })]);
      },
      { timeout: 15_000, interval: 250 },
    );

    expect((await mgmt("PATCH", `/hooks/${hook.id}`, { headers: { "tenant-id": own }, body: { enabled: false } })).status).toBe(200);
    expect((await login(user.email as string, PASSWORD, at)).status).toBe(302);
    expect(await loginEvents()).toHaveLength(1);
    await relay(own);
    expect(await deliveries(name)).toHaveLength(1);
  });

  it("a tenant linked to a parent stores the event for the parent's webhook, read at delivery (control-plane inheritance)", async () => {
    const parent = await createTenant();
    const child = await createTenant();
    const name = uniqueId("parent");
    await createHook(parent, "post-user-login", hookUrl(name));
    const emitted = () =>
      runInDurableObject(env.TENANT.getByName(child), (o: TenantObject) =>
        o.outbox.commit((tx) => emitHook(tx, "post-user-login", { user: { user_id: "auth0|inherited" }, client_id: null })),
      );
    // No webhook of its own and no parent: nothing to store.
    expect(await emitted()).toBe(false);
    expect(await outboxRows(child, "hook.post-user-login")).toEqual([]);
    await env.TENANT.getByName(child).hooks().linkParent(parent, { actor: { type: "system", id: null } });
    expect(await emitted()).toBe(true);
    // The object's own alarm may hold the event's claim when the test's relay pass runs: wait for the delivery.
    await vi.waitFor(
      async () => {
        await relay(child);
        const [delivery] = await deliveries(name);
        expect(delivery?.body).toMatchObject({ trigger_id: "post-user-login", tenant_id: child, data: { user: { user_id: "auth0|inherited" } } });
      },
      { timeout: 15_000, interval: 250 },
    );
  });
});

describe("the login flows' log rows are written in their commits (issue 31)", () => {
  it("s and fp are in /logs as soon as the requests answer, seacft once its code shard's batch lands; no outbox row and no relay run", async () => {
    const email = `${uniqueId("direct")}@example.com`;
    const user = await seedUser(tenant, email, PASSWORD);
    const direct = async () =>
      (await Promise.all(["user.login", "user.login_failed", "token.code_exchanged"].map((type) => outboxRows(tenant, type)))).flat().length;
    const before = await direct();
    expect((await login(email, "wrong-password")).status).toBe(403);
    const res = await login(email, PASSWORD);
    const code = new URL(res.headers.get("location") ?? "").searchParams.get("code") ?? "";
    const params = { grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret ?? "" };
    expect((await tokenForm(params, {}, host)).status).toBe(200);
    const mine = async () => (await logsOf(tenant, `?q=${encodeURIComponent(`user_id:"${user.user_id}" AND (type:fp OR type:s OR type:seacft)`)}&sort=date:1`)).map((l) => l.type);
    // No relay here: the login's rows were committed with the writes; the exchange's comes in its code shard's
    // batch (its alarm sends it within a quarter of a second; here it is sent at once, if it has not gone yet).
    await flushCodeShards(tenant);
    expect(await mine()).toEqual(["fp", "s", "seacft"]);
    expect(await direct()).toBe(before);
  });

  it("with a metrics sink counting the relay's deliveries, they go through the outbox as before", async () => {
    const metered = await createTenant();
    const meteredClient = await seedClient(metered, { callbacks: [CALLBACK] });
    const email = `${uniqueId("metered")}@example.com`;
    await seedUser(metered, email, PASSWORD);
    await relay(metered);
    await runInDurableObject(env.TENANT.getByName(metered), (o: TenantObject) => {
      o.outbox.metrics = () => {};
    });
    expect((await login(email, PASSWORD, { tenant: metered, client: meteredClient })).status).toBe(302);
    expect((await outboxRows(metered, "user.login")).length).toBe(1);
    await relay(metered);
    expect((await logsOf(metered, "?q=type:s")).length).toBe(1);
  });

  it("management events still go through the outbox (their before/after payloads are read there)", async () => {
    const created = await mgmt("POST", "/roles", { headers: { "tenant-id": tenant }, body: { name: uniqueId("role") } });
    expect(created.status).toBe(201);
    expect((await outboxRows(tenant, "role.created")).length).toBeGreaterThan(0);
  });
});
