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
