import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { resetBootstrap } from "../../src/worker/tenant/bootstrap";
import { invalidateTenantConfig } from "../../src/worker/tenant/config-cache";
import { CP, createTenant, mgmt, uniqueId } from "../helpers/api";
import { inheritingApp, tenantRows } from "../helpers/inheritance";
import { outboxRows, relay } from "../helpers/outbox";

/**
 * `sync` (SPEC "Control-plane inheritance", default {resourceServers: true, roles: true}; issue 15 point 2):
 * the control plane's roles and management API scopes follow into every child through the control plane's
 * outbox; with sync off nothing is propagated.
 */

const SYNC_EVENT = "internal.control_plane_sync";
const MANAGEMENT = "urn:gatehouse:management";

const childRole = async (tenant: string, name: string): Promise<{ id: string; description: unknown; permissions: unknown[] } | null> => {
  const [role] = await tenantRows(tenant, "SELECT id, name, description FROM roles WHERE name = ?", name);
  if (!role) return null;
  const permissions = (await tenantRows(tenant, "SELECT permission_name FROM role_permissions WHERE role_id = ? ORDER BY permission_name", role.id)).map(
    (p) => p.permission_name,
  );
  return { id: String(role.id), description: role.description, permissions };
};

const syncEvents = async () => (await outboxRows(CP.tenantId)).filter((e) => e.event_type === SYNC_EVENT);

/**
 * Runs the control plane's relay until every sync pass is delivered (its own alarm may hold a claim on a
 * pass at the moment the test runs the relay, so one run is not always enough).
 */
async function settle() {
  for (let i = 0; i < 100; i++) {
    await relay(CP.tenantId);
    if ((await syncEvents()).every((e) => e.processed_at !== null || e.dead_lettered_at !== null)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the control plane's sync passes were not delivered");
}

describe("sync of the control plane's roles", () => {
  it("a role created, granted a permission, renamed and deleted on the control plane follows into every child", async () => {
    const send = inheritingApp();
    const child = await createTenant();
    const other = await createTenant();
    const name = uniqueId("role");
    const created = await send("POST", "/api/v2/roles", { body: { name, description: "Support staff" } });
    expect(created.status).toBe(201);
    const role = (await created.json()) as { id: string };
    expect(
      (await send("POST", `/api/v2/roles/${role.id}/permissions`, { body: { permissions: [{ resource_server_identifier: MANAGEMENT, permission_name: "read:users" }] } })).status,
    ).toBe(201);
    await settle();
    for (const tenant of [child, other]) expect(await childRole(tenant, name)).toMatchObject({ description: "Support staff", permissions: ["read:users"] });
    const mirrored = (await childRole(child, name))?.id as string;

    // Idempotent: another pass changes nothing (same ids, no duplicate).
    await runInDurableObject(env.TENANT.getByName(CP.tenantId), (o) => o.controlPlaneSync().request({ resource_servers: false, roles: true }));
    await settle();
    expect(await tenantRows(child, "SELECT id FROM roles WHERE name = ?", name)).toEqual([{ id: mirrored }]);

    const renamed = `${name}-renamed`;
    expect((await send("PATCH", `/api/v2/roles/${role.id}`, { body: { name: renamed, description: "Tier 2" } })).status).toBe(200);
    await settle();
    expect(await childRole(child, renamed)).toMatchObject({ id: mirrored, description: "Tier 2", permissions: ["read:users"] });
    expect(await childRole(child, name)).toBeNull();

    expect((await send("DELETE", `/api/v2/roles/${role.id}`)).status).toBe(204);
    await settle();
    expect(await childRole(child, renamed)).toBeNull();
    expect(await childRole(other, renamed)).toBeNull();
  });

  it("a child's own roles are left alone, and the pass is recorded in the control plane's outbox until delivered", async () => {
    const send = inheritingApp();
    const child = await createTenant();
    const own = await mgmt("POST", "/roles", { headers: { "tenant-id": child }, body: { name: uniqueId("own") } });
    expect(own.status).toBe(201);
    const before = (await syncEvents()).length;
    const name = uniqueId("role");
    const role = (await (await send("POST", "/api/v2/roles", { body: { name } })).json()) as { id: string };
    const pending = await syncEvents();
    expect(pending.length).toBe(before + 1);
    await settle();
    expect((await syncEvents()).every((e) => e.processed_at !== null)).toBe(true);
    expect(await childRole(child, name)).not.toBeNull();
    expect(await tenantRows(child, "SELECT id FROM roles WHERE id = ?", ((await own.json()) as { id: string }).id)).toHaveLength(1);
    await send("DELETE", `/api/v2/roles/${role.id}`);
    await settle();
    expect(await tenantRows(child, "SELECT count(*) AS n FROM roles")).toEqual([{ n: 1 }]);
  });

  it("with sync.roles off (or inheritance off) a control-plane role is not propagated and no pass is recorded", async () => {
    const child = await createTenant();
    for (const [label, send] of [
      ["sync off", inheritingApp({ controlPlane: { sync: { roles: false } } })],
      ["inheritance off", inheritingApp({ controlPlane: { inherit: false } })],
    ] as const) {
      const before = (await syncEvents()).length;
      const name = uniqueId("role");
      const role = (await (await send("POST", "/api/v2/roles", { body: { name } })).json()) as { id: string };
      await settle();
      expect((await syncEvents()).length, label).toBe(before);
      expect(await childRole(child, name), label).toBeNull();
      await mgmt("DELETE", `/roles/${role.id}`);
    }
  });

  it("roles are read from the control plane at delivery: a child created after the change is brought in step by the next pass", async () => {
    const send = inheritingApp();
    const name = uniqueId("role");
    const role = (await (await send("POST", "/api/v2/roles", { body: { name } })).json()) as { id: string };
    await settle();
    const late = await createTenant();
    expect(await childRole(late, name)).toBeNull();
    await send("PATCH", `/api/v2/roles/${role.id}`, { body: { description: "now" } });
    await settle();
    expect(await childRole(late, name)).toMatchObject({ description: "now" });
    await send("DELETE", `/api/v2/roles/${role.id}`);
    await settle();
  });
});

/** Drops a management scope from a tenant's management API, as a tenant seeded by an older release has it. */
async function dropScope(tenant: string, scope: string) {
  await runInDurableObject(env.TENANT.getByName(tenant), (_o, state) => {
    const row = state.storage.sql.exec("SELECT id, scopes FROM resource_servers WHERE is_system = 1").one();
    const scopes = (JSON.parse(String(row.scopes)) as { value: string }[]).filter((s) => s.value !== scope);
    state.storage.sql.exec("UPDATE resource_servers SET scopes = ? WHERE id = ?", JSON.stringify(scopes), row.id);
    state.storage.sql.exec("UPDATE _settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'config_version'");
  });
  invalidateTenantConfig(tenant);
}

const managementScopes = async (tenant: string) =>
  (JSON.parse(String((await tenantRows(tenant, "SELECT scopes FROM resource_servers WHERE is_system = 1"))[0]?.scopes)) as { value: string }[]).map((s) => s.value);

describe("sync of the control plane's management API", () => {
  it("a release that adds a management scope re-seeds the control plane, and every child's management API gets it", async () => {
    const child = await createTenant();
    await dropScope(CP.tenantId, "read:logs");
    await dropScope(child, "read:logs");
    resetBootstrap();
    const send = inheritingApp();
    expect((await send("GET", "/.well-known/openid-configuration")).status).toBe(200);
    expect(await managementScopes(CP.tenantId)).toContain("read:logs");
    await settle();
    expect(await managementScopes(child)).toContain("read:logs");
    expect(await managementScopes(child)).toEqual(await managementScopes(CP.tenantId));
  });

  it("with sync.resourceServers off the child's management API is not touched", async () => {
    const child = await createTenant();
    await dropScope(CP.tenantId, "read:logs");
    await dropScope(child, "read:logs");
    resetBootstrap();
    const send = inheritingApp({ controlPlane: { sync: { resourceServers: false } } });
    const before = (await syncEvents()).length;
    expect((await send("GET", "/.well-known/openid-configuration")).status).toBe(200);
    expect(await managementScopes(CP.tenantId)).toContain("read:logs");
    await settle();
    expect((await syncEvents()).length).toBe(before);
    expect(await managementScopes(child)).not.toContain("read:logs");
  });
});
