import { describe, expect, it } from "vitest";
import { CP, createTenant, mgmt, uniqueId } from "../helpers/api";
import { createHook, deliveries, hookUrl, relay } from "../helpers/outbox";
import { inheritingApp, tenantRows } from "../helpers/inheritance";
import { tenantToken } from "../helpers/reach";

/**
 * Hooks inherited from the control plane (issue 15 point 2): a child's flows also call the control plane's
 * webhooks, read when they run (never copied); the child's management API lists them marked inherited and
 * refuses to change them.
 */

type Hook = { id: string; trigger_id: string; url: string; inherited?: boolean };

const newUser = (send: ReturnType<typeof inheritingApp>, tenant: string, email = `${uniqueId("u")}@example.com`) =>
  send("POST", "/api/v2/users", { tenant, body: { connection: "Username-Password-Authentication", email, password: "p4ssw0rd!long-enough" } });

const dropHook = (id: string) => mgmt("DELETE", `/hooks/${id}`, { headers: { "tenant-id": CP.tenantId } });

describe("control-plane hooks in a child tenant", () => {
  it("are listed after the child's own hooks marked inherited, read by id, and PATCH/DELETE are 403; the control plane's hook stays", async () => {
    const send = inheritingApp();
    const child = await createTenant();
    const parentHook = await createHook(CP.tenantId, "post-user-login", hookUrl(uniqueId("cp")));
    const own = await createHook(child, "post-user-login", hookUrl(uniqueId("own")));
    try {
      const listed = (await (await send("GET", "/api/v2/hooks?triggerId=post-user-login", { tenant: child })).json()) as Hook[];
      expect(listed[0]).toMatchObject({ id: own.id });
      expect(listed[0]?.inherited).toBeUndefined();
      expect(listed.find((h) => h.id === parentHook.id)).toMatchObject({ inherited: true, url: parentHook.url });
      const totals = (await (await send("GET", "/api/v2/hooks?include_totals=true", { tenant: child })).json()) as { total: number; hooks: Hook[] };
      expect(totals.total).toBe(totals.hooks.length);
      expect(await (await send("GET", `/api/v2/hooks/${parentHook.id}`, { tenant: child })).json()).toMatchObject({ id: parentHook.id, inherited: true });
      for (const [method, body] of [["PATCH", { enabled: false }], ["DELETE", undefined]] as const) {
        const res = await send(method, `/api/v2/hooks/${parentHook.id}`, { tenant: child, ...(body ? { body } : {}) });
        expect(res.status, method).toBe(403);
        expect(await res.json()).toMatchObject({ statusCode: 403, message: expect.stringContaining("inherited") });
      }
      expect(await (await mgmt("GET", `/hooks/${parentHook.id}`, { headers: { "tenant-id": CP.tenantId } })).json()).toMatchObject({ enabled: true });
      // Nothing of the parent's was written into the child.
      expect((await tenantRows(child, "SELECT id FROM hooks")).map((r) => r.id)).toEqual([own.id]);
    } finally {
      await dropHook(parentHook.id);
    }
  });

  it("the child's own token reads its inherited hooks but not another tenant's; no token 401, missing scope 403", async () => {
    const send = inheritingApp();
    const child = await createTenant();
    const other = await createTenant();
    const otherHook = await createHook(other, "post-user-login", hookUrl(uniqueId("other")));
    const parentHook = await createHook(CP.tenantId, "post-user-login", hookUrl(uniqueId("cp")));
    try {
      const own = await send("GET", "/api/v2/hooks", { token: await tenantToken(child, "read:hooks") });
      const ids = ((await own.json()) as Hook[]).map((h) => h.id);
      expect(ids).toContain(parentHook.id);
      expect(ids).not.toContain(otherHook.id);
      expect((await send("GET", `/api/v2/hooks/${otherHook.id}`, { token: await tenantToken(child, "read:hooks") })).status).toBe(404);
      expect((await send("GET", "/api/v2/hooks", { tenant: child, token: "" })).status).toBe(401);
      expect((await send("GET", "/api/v2/hooks", { token: await tenantToken(child, "read:users") })).status).toBe(403);
      expect((await send("GET", "/api/v2/hooks", { tenant: child, token: await tenantToken(other, "read:hooks") })).status).toBe(403);
      expect((await send("DELETE", `/api/v2/hooks/${parentHook.id}`, { token: await tenantToken(child, "delete:hooks") })).status).toBe(403);
    } finally {
      await dropHook(parentHook.id);
    }
  });

  it("a control-plane blocking hook runs in the child's sign-up: its denial leaves no user in the child", async () => {
    const send = inheritingApp();
    const child = await createTenant();
    const name = uniqueId("deny");
    const parentHook = await createHook(CP.tenantId, "pre-user-registration", hookUrl(name, "deny=Closed%20by%20the%20platform"));
    try {
      const email = `${uniqueId("u")}@example.com`;
      const res = await newUser(send, child, email);
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("Closed by the platform");
      expect(await tenantRows(child, "SELECT user_id FROM users WHERE email = ?", email)).toEqual([]);
      const [call] = await deliveries(name);
      expect(call?.body).toMatchObject({ trigger_id: "pre-user-registration", tenant_id: child });
    } finally {
      await dropHook(parentHook.id);
    }
  });

  it("a control-plane post-user-registration webhook receives the child's event through the child's relay (tenant_id is the child's)", async () => {
    const send = inheritingApp();
    const child = await createTenant();
    const name = uniqueId("post");
    const parentHook = await createHook(CP.tenantId, "post-user-registration", hookUrl(name));
    try {
      const email = `${uniqueId("u")}@example.com`;
      expect((await newUser(send, child, email)).status).toBe(201);
      // The child's own alarm may hold the event at the moment the test runs the relay: run it until delivered.
      let received: Awaited<ReturnType<typeof deliveries>> = [];
      for (let i = 0; i < 50 && received.length === 0; i++) {
        await relay(child);
        received = (await deliveries(name)).filter((d) => d.body.tenant_id === child);
        if (received.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(received).toHaveLength(1);
      expect(received[0]?.body).toMatchObject({ event_type: "hook.post-user-registration", data: { user: { email } } });
    } finally {
      await dropHook(parentHook.id);
    }
  });

  it("resolveControlPlane returning undefined opts a tenant out: no inherited hooks listed, none called", async () => {
    const optedOut = await createTenant();
    const send = inheritingApp({ controlPlane: { resolveControlPlane: ({ tenant_id }) => (tenant_id === optedOut ? undefined : { tenantId: CP.tenantId }) } });
    const name = uniqueId("out");
    const pre = await createHook(CP.tenantId, "pre-user-registration", hookUrl(`${name}-pre`, "deny=no"));
    const post = await createHook(CP.tenantId, "post-user-registration", hookUrl(name));
    try {
      const listed = (await (await send("GET", "/api/v2/hooks", { tenant: optedOut })).json()) as Hook[];
      expect(listed.some((h) => h.inherited)).toBe(false);
      expect((await send("GET", `/api/v2/hooks/${post.id}`, { tenant: optedOut })).status).toBe(404);
      expect((await newUser(send, optedOut)).status).toBe(201);
      await relay(optedOut);
      expect(await deliveries(`${name}-pre`)).toEqual([]);
      expect((await deliveries(name)).filter((d) => d.body.tenant_id === optedOut)).toEqual([]);
    } finally {
      await dropHook(pre.id);
      await dropHook(post.id);
    }
  });
});
