import { describe, expect, it, vi } from "vitest";
import { call, createTenant, mgmt, token, uniqueId } from "../helpers/api";
import { createApi, createClient, grantClient } from "../helpers/management";
import { createHook, deliveries, fireAlarm, hookUrl, injectClock, outboxRows, relay, tenantSql } from "../helpers/outbox";

const signup = (tenantId: string, clientId: string, email: string, password = "p4ssw0rd!long") =>
  call("/dbconnections/signup", {
    method: "POST",
    host: `${tenantId}.localhost:8787`,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_id: clientId, email, password, connection: "Username-Password-Authentication" }),
  });

/** A tenant with one public client allowed to sign users up. */
async function tenantWithApp() {
  const tenantId = await createTenant();
  const client = await createClient({ app_type: "spa", token_endpoint_auth_method: "none" }, { headers: { "tenant-id": tenantId } });
  return { tenantId, clientId: client.client_id };
}

describe("webhooks through the outbox (SPEC §6.2)", () => {
  it("delivers post-user-registration with Idempotency-Key = event id and the documented body, then finalizes the registration", async () => {
    const { tenantId, clientId } = await tenantWithApp();
    const name = uniqueId("reg");
    await createHook(tenantId, "post-user-registration", hookUrl(name));
    const email = `${uniqueId("u")}@example.com`;
    const res = await signup(tenantId, clientId, email);
    expect(res.status, await res.clone().text()).toBe(200);
    const { id: userId } = (await res.json()) as { id: string };
    const [event] = await outboxRows(tenantId, "hook.post-user-registration");
    expect(event).toBeDefined();

    // The object's own alarm may hold the event's claim when the test's relay pass runs: wait for the delivery.
    await vi.waitFor(
      async () => {
        await relay(tenantId);
        expect(await deliveries(name)).not.toEqual([]);
      },
      { timeout: 15_000, interval: 250 },
    );
    const got = await deliveries(name);
    expect(got).toHaveLength(1);
    expect(got[0]?.key).toBe(event?.id);
    expect(got[0]?.body).toMatchObject({
      id: event?.id,
      event_type: "hook.post-user-registration",
      trigger_id: "post-user-registration",
      tenant_id: tenantId,
      attempt: 1,
      data: { user: { user_id: userId, email }, client_id: clientId },
    });
    expect(JSON.stringify(got[0]?.body)).not.toContain("p4ssw0rd");
    const [user] = await tenantSql<{ at: number | null }>(tenantId, "SELECT registration_completed_at AS at FROM users WHERE user_id = ?", userId);
    expect(user?.at).toEqual(expect.any(Number));
    expect((await outboxRows(tenantId, "hook.post-user-registration"))[0]?.processed_at).toEqual(expect.any(Number));
    // Issue 28 point 5: the management API's user reads show it (SPEC §2.12).
    const read = (await (await mgmt("GET", `/users/${encodeURIComponent(userId)}`, { headers: { "tenant-id": tenantId } })).json()) as Record<string, unknown>;
    expect(read.registration_completed_at).toBe(new Date(user?.at as number).toISOString());
  });

  it("retries a failing receiver with backoff and the same Idempotency-Key, and registration completes only after success", async () => {
    const { tenantId, clientId } = await tenantWithApp();
    const clock = await injectClock(tenantId);
    const name = uniqueId("flaky");
    await createHook(tenantId, "post-user-registration", hookUrl(name, "fail=2&status=503"));
    const res = await signup(tenantId, clientId, `${uniqueId("u")}@example.com`);
    const { id: userId } = (await res.json()) as { id: string };
    const completed = async () =>
      (await tenantSql<{ at: number | null }>(tenantId, "SELECT registration_completed_at AS at FROM users WHERE user_id = ?", userId))[0]?.at;

    expect(await fireAlarm(tenantId)).toBe(true);
    let [event] = await outboxRows(tenantId, "hook.post-user-registration");
    // Attempt 1 failed: backoff of BASE 1 s with jitter 0.5 -> 750 ms; registration not finalized.
    expect(event).toMatchObject({ retry_count: 1, processed_at: null, claim_id: null, lease_until: null });
    expect(event?.error).toContain("HTTP 503");
    expect(event?.next_retry_at).toBe(clock.now + 750);
    expect(await completed()).toBeNull();

    // Not due yet: a pass changes nothing.
    await fireAlarm(tenantId);
    expect((await deliveries(name)).length).toBe(1);

    clock.now += 750;
    await fireAlarm(tenantId);
    [event] = await outboxRows(tenantId, "hook.post-user-registration");
    expect(event?.retry_count).toBe(2);
    expect(event?.next_retry_at).toBe(clock.now + 1500);

    clock.now += 1500;
    await fireAlarm(tenantId);
    const got = await deliveries(name);
    expect(got.map((d) => d.status)).toEqual([503, 503, 200]);
    expect(new Set(got.map((d) => d.key))).toEqual(new Set([event?.id]));
    expect(got.map((d) => d.body.attempt)).toEqual([1, 2, 3]);
    expect((await outboxRows(tenantId, "hook.post-user-registration"))[0]?.processed_at).toBe(clock.now);
    expect(await completed()).toBe(clock.now);
  });
});

describe("credentials-exchange webhooks (SPEC §6.1)", () => {
  it("a client_credentials exchange reaches an enabled credentials-exchange webhook through the outbox, and records nothing without one", async () => {
    const tenantId = await createTenant();
    const headers = { "tenant-id": tenantId };
    const api = await createApi(["read:things"], { headers });
    const m2m = await createClient({ app_type: "non_interactive" }, { headers });
    await grantClient(m2m.client_id, api.identifier, ["read:things"], { headers });
    const exchange = () =>
      token({ grant_type: "client_credentials", client_id: m2m.client_id, client_secret: m2m.client_secret, audience: api.identifier }, { host: `${tenantId}.localhost:8787` });

    expect((await exchange()).status).toBe(200);
    expect(await outboxRows(tenantId, "hook.credentials-exchange")).toEqual([]);

    const name = uniqueId("cx");
    await createHook(tenantId, "credentials-exchange", hookUrl(name));
    expect((await exchange()).status).toBe(200);
    const [event] = await outboxRows(tenantId, "hook.credentials-exchange");
    // The object's own alarm may hold the event's claim when the test's relay pass runs: wait for the delivery.
    await vi.waitFor(
      async () => {
        await relay(tenantId);
        expect(await deliveries(name)).not.toEqual([]);
      },
      { timeout: 15_000, interval: 250 },
    );
    const [delivery] = await deliveries(name);
    expect(delivery).toMatchObject({ key: event?.id, body: { data: { client_id: m2m.client_id, audience: api.identifier, scope: "read:things" } } });
    expect(JSON.stringify(delivery?.body)).not.toContain(m2m.client_secret as string);
  });
});
