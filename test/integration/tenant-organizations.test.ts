import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { CustomDomainRecord } from "../../src/shared/types";
import { CP, call, createTenant, mgmt, uniqueId } from "../helpers/api";
import { tenantManagementToken } from "../helpers/management";

const controlPlaneOrgByName = async (name: string) => {
  const res = await mgmt("GET", `/organizations/name/${name}`);
  return { status: res.status, body: (await res.json()) as { id: string; name: string; metadata: Record<string, string> } };
};

describe("tenant organizations on the control plane (issue 15 point 3)", () => {
  it("creating a tenant creates its organization on the control plane, named after it, metadata.tenant_id set", async () => {
    const id = await createTenant();
    const org = await controlPlaneOrgByName(id);
    expect(org.status).toBe(200);
    expect(org.body).toMatchObject({ name: id, metadata: { tenant_id: id } });
    // It lives on the control plane only, not in the child.
    expect((await mgmt("GET", `/organizations/name/${id}`, { headers: { "tenant-id": id } })).status).toBe(404);
  });

  it("deleting a tenant removes its organization and releases its custom domains for others to claim", async () => {
    const id = await createTenant();
    const domain = `gone.${uniqueId()}.example.test`;
    const claimed = await mgmt("POST", "/custom-domains", { body: { tenant_id: id, domain, type: "auth0_managed_certs" } });
    expect(claimed.status).toBe(201);
    const record = (await claimed.json()) as CustomDomainRecord;
    expect((await mgmt("DELETE", `/tenants/${id}`)).status).toBe(204);
    expect((await controlPlaneOrgByName(id)).status).toBe(404);
    expect(await env.PLATFORM.getByName("platform").domains().get(record.custom_domain_id)).toBeNull();
    expect((await call("/.well-known/openid-configuration", { host: domain })).status).toBe(404);
    const other = await createTenant();
    expect((await mgmt("POST", "/custom-domains", { body: { tenant_id: other, domain, type: "auth0_managed_certs" } })).status).toBe(201);
  });

  it("a child tenant's token never creates, lists or reads other tenants (SPEC §5.4 message)", async () => {
    const child = await createTenant();
    const other = await createTenant();
    const token = await tenantManagementToken(child, ["read:tenants", "create:tenants", "update:tenants", "delete:tenants"]);
    const read = await mgmt("GET", `/tenants/${other}`, { token });
    expect(read.status).toBe(403);
    expect(((await read.json()) as { message: string }).message).toBe("Cross-tenant management requires a control-plane token");
    const created = await mgmt("POST", "/tenants", { token, body: { id: uniqueId() } });
    expect(created.status).toBe(403);
    const list = (await (await mgmt("GET", "/tenants", { token })).json()) as { id: string }[];
    expect(list.map((t) => t.id)).toEqual([child]);
    expect((await mgmt("PATCH", `/tenants/${other}`, { token, body: { name: "x" } })).status).toBe(403);
    expect((await mgmt("DELETE", `/tenants/${other}`, { token })).status).toBe(403);
    expect((await mgmt("GET", "/tenants", { token, headers: { "tenant-id": other } })).status).toBe(403);
    expect((await mgmt("GET", `/tenants/${CP.tenantId}`, { token })).status).toBe(403);
  });
});

describe("tenant lifecycle hooks (issue 15 point 4)", () => {
  it("run around create, update and delete with the tenant and the actor; a -ing hook's refusal changes nothing", async () => {
    const { createApp } = await import("../../src/worker/app");
    const { createExecutionContext } = await import("cloudflare:test");
    const { controlPlaneToken } = await import("../helpers/api");
    const events: string[] = [];
    const app = createApp({
      onTenantCreating: ({ tenant }) => {
        events.push(`creating ${tenant.id}`);
        if (tenant.id.startsWith("refused-")) throw new Error("no tenants named like that");
      },
      onTenantCreated: ({ tenant, actor }) => void events.push(`created ${tenant.id} by ${actor.tenantId}`),
      onTenantUpdating: ({ tenant, patch }) => void events.push(`updating ${tenant.id} ${JSON.stringify(patch)}`),
      onTenantUpdated: ({ tenant, before }) => void events.push(`updated ${before.name} -> ${tenant.name}`),
      onTenantDeleting: ({ tenant }) => void events.push(`deleting ${tenant.id}`),
      onTenantDeleted: ({ tenant }) => void events.push(`deleted ${tenant.id}`),
    });
    const token = await controlPlaneToken();
    const send = (method: string, path: string, body?: unknown) =>
      app.fetch(
        new Request(`http://localhost:8787/api/v2${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
        }),
        env,
        createExecutionContext(),
      );
    const id = uniqueId("hooked");
    expect((await send("POST", "/tenants", { id, name: "Before" })).status).toBe(201);
    expect((await send("PATCH", `/tenants/${id}`, { name: "After" })).status).toBe(200);
    expect((await send("DELETE", `/tenants/${id}`)).status).toBe(204);
    expect(events).toEqual([
      `creating ${id}`,
      `created ${id} by ${CP.tenantId}`,
      `updating ${id} {"name":"After"}`,
      "updated Before -> After",
      `deleting ${id}`,
      `deleted ${id}`,
    ]);
    const refusedId = uniqueId("refused");
    const refused = await send("POST", "/tenants", { id: refusedId });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toContain("no tenants named like that");
    expect((await mgmt("GET", `/tenants/${refusedId}`)).status).toBe(404);
  });
});
