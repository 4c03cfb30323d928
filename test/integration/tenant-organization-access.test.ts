import { createExecutionContext, env } from "cloudflare:test";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { CP, createTenant, mgmt, uniqueId } from "../helpers/api";
import { tenantManagementToken } from "../helpers/management";
import { codeOf, exchange, hostOf, loginThroughPages, orgClient } from "../helpers/org-login";
import { onTenant, orgWithMembers } from "../helpers/organizations";
import { CP_HOST, controlPlaneRole, getWith, memberToken, tenantOrganization } from "../helpers/tenant-members";

type TenantList = { id: string }[];
const messageOf = async (res: Response) => ((await res.json()) as { message: string }).message;

describe("control-plane users reach /api/v2/tenants through their tenant's organization (issue 15 point 3)", () => {
  it("a member holding read:tenants in tenant A's organization lists only tenant A and reads it", async () => {
    const a = await createTenant();
    await createTenant();
    const { token, claims } = await memberToken(a, [await controlPlaneRole(["read:tenants", "update:tenants"])]);
    // Only the tenants scopes held through the organization (and current-user ones) are issued: never
    // create/delete, never another resource's.
    expect(String(claims.scope).split(" ").sort()).toEqual(["openid", "read:current_user", "read:tenants", "update:tenants"]);
    const list = await getWith(token, "/tenants");
    expect(list.status).toBe(200);
    expect(((await list.json()) as TenantList).map((t) => t.id)).toEqual([a]);
    const one = await getWith(token, `/tenants/${a}`);
    expect(one.status).toBe(200);
    expect(((await one.json()) as { id: string }).id).toBe(a);
  });

  it("a user of organization A cannot read, update or delete tenant B, nor the control plane (403 with a clear message)", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const { token } = await memberToken(a, [await controlPlaneRole(["read:tenants", "update:tenants"])]);
    const read = await getWith(token, `/tenants/${b}`);
    expect(read.status).toBe(403);
    expect(await messageOf(read)).toBe(`Access denied to tenant "${b}": it is not the tenant of the token's organization`);
    expect((await mgmt("PATCH", `/tenants/${b}`, { token, body: { friendly_name: "Taken" } })).status).toBe(403);
    expect((await getWith(token, `/tenants/${CP.tenantId}`)).status).toBe(403);
    expect((await mgmt("DELETE", `/tenants/${b}`, { token })).status).toBe(403);
    expect((await mgmt("DELETE", `/tenants/${a}`, { token })).status).toBe(403);
    expect((await mgmt("GET", `/tenants/${b}`)).status).toBe(200);
  });

  it("a member updates its tenant's names, but never its deployment fields; nor can it create tenants", async () => {
    const a = await createTenant();
    const { token } = await memberToken(a, [await controlPlaneRole(["read:tenants", "update:tenants"])]);
    const renamed = await mgmt("PATCH", `/tenants/${a}`, { token, body: { friendly_name: "Renamed by its member" } });
    expect(renamed.status, await renamed.clone().text()).toBe(200);
    expect(((await renamed.json()) as { friendly_name: string }).friendly_name).toBe("Renamed by its member");
    const pinned = await mgmt("PATCH", `/tenants/${a}`, { token, body: { worker_version: "v9" } });
    expect(pinned.status).toBe(403);
    expect(((await (await mgmt("GET", `/tenants/${a}`)).json()) as { worker_version: string }).worker_version).toBe("current");
    expect((await mgmt("POST", "/tenants", { token, body: { id: uniqueId() } })).status).toBe(403);
  });

  it("an organization-bound token reaches nothing else on the control plane (/clients, another tenant by header)", async () => {
    const a = await createTenant();
    const { token } = await memberToken(a, [await controlPlaneRole(["read:tenants", "update:tenants", "read:clients"])]);
    expect(String(decodeJwt(token).scope).split(" ")).not.toContain("read:clients");
    expect((await getWith(token, "/clients")).status).toBe(403);
    expect((await getWith(token, "/tenants", { "tenant-id": a })).status).toBe(403);
    expect((await getWith(token, "/organizations")).status).toBe(403);
  });

  it("a member without tenants permissions in the organization gets no tenants scope and is refused", async () => {
    const a = await createTenant();
    const { token, claims } = await memberToken(a, []);
    expect(String(claims.scope).split(" ")).not.toContain("read:tenants");
    expect((await getWith(token, "/tenants")).status).toBe(403);
  });

  it("the same user logging in to the control plane without an organization holds only current-user scopes", async () => {
    const a = await createTenant();
    const member = await memberToken(a, [await controlPlaneRole(["read:tenants"])]);
    const login = await loginThroughPages(CP_HOST, member.client, String(member.user.email), { audience: CP.audience, scope: "openid read:tenants read:current_user" });
    const tokens = await exchange(CP_HOST, member.client, codeOf(login));
    expect(String(tokens.accessClaims.scope).split(" ").sort()).toEqual(["openid", "read:current_user"]);
    expect((await getWith(tokens.access_token, "/tenants")).status).toBe(403);
  });

  it("a user token on a child tenant, in an organization holding read:tenants there, still gets only current-user scopes", async () => {
    const child = await createTenant();
    const { org, users } = await orgWithMembers(child, 1);
    const role = await onTenant(child).json<{ id: string }>("POST", "/roles", { name: uniqueId("r") });
    await onTenant(child).json("POST", `/roles/${role.id}/permissions`, { permissions: [{ resource_server_identifier: CP.audience, permission_name: "read:tenants" }] }, 201);
    await onTenant(child).json("POST", `/organizations/${org.id}/members/${users[0]?.user_id}/roles`, { roles: [role.id] }, 204);
    const client = await orgClient(child);
    const res = await loginThroughPages(hostOf(child), client, String(users[0]?.email), { organization: org.id, audience: CP.audience, scope: "openid read:tenants read:current_user" });
    const tokens = await exchange(hostOf(child), client, codeOf(res));
    expect(String(tokens.accessClaims.scope).split(" ").sort()).toEqual(["openid", "read:current_user"]);
    expect((await getWith(tokens.access_token, "/tenants")).status).toBe(403);
  });

  it("a revoked organization-bound token is refused", async () => {
    const a = await createTenant();
    const member = await memberToken(a, [await controlPlaneRole(["read:tenants"])]);
    expect((await getWith(member.token, `/tenants/${a}`)).status).toBe(200);
    const { call } = await import("../helpers/api");
    const revoked = await call("/oauth/revoke", {
      method: "POST",
      host: CP_HOST,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: member.token, client_id: member.client.client_id, client_secret: member.client.client_secret as string }).toString(),
    });
    expect(revoked.status).toBe(200);
    expect((await getWith(member.token, `/tenants/${a}`)).status).toBe(403);
  });

  it("with requireOrganizationMatch off, an organization-bound token holding read:tenants sees every tenant", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const { token } = await memberToken(a, [await controlPlaneRole(["read:tenants"])]);
    const { createApp } = await import("../../src/worker/app");
    const app = createApp({ controlPlane: { requireOrganizationMatch: false } });
    const send = (path: string) =>
      app.fetch(new Request(`http://localhost:8787/api/v2${path}`, { headers: { authorization: `Bearer ${token}` } }), env, createExecutionContext());
    expect((await send(`/tenants/${b}`)).status).toBe(200);
    const ids = ((await (await send("/tenants")).json()) as TenantList).map((t) => t.id);
    expect(ids).toEqual(expect.arrayContaining([a, b]));
    // Still never create or delete.
    const created = await app.fetch(
      new Request("http://localhost:8787/api/v2/tenants", { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ id: uniqueId() }) }),
      env,
      createExecutionContext(),
    );
    expect(created.status).toBe(403);
  });

  it("a child tenant's token is refused on another tenant with the SPEC's message, whatever its org_id", async () => {
    const child = await createTenant();
    const other = await createTenant();
    const token = await tenantManagementToken(child, ["read:tenants"]);
    const res = await getWith(token, `/tenants/${other}`);
    expect(res.status).toBe(403);
    expect(await messageOf(res)).toBe("Cross-tenant management requires a control-plane token");
    const org = await tenantOrganization(other);
    const { mintWithTenantKey } = await import("../helpers/mint");
    const forged = await mintWithTenantKey(child, {
      iss: `http://${child}.localhost:8787/`,
      aud: CP.audience,
      sub: "auth0|someone",
      gty: undefined,
      org_id: org.id,
      scope: "read:tenants",
    });
    expect((await getWith(forged, `/tenants/${other}`)).status).toBe(403);
    expect(((await (await getWith(await tenantManagementToken(child, ["read:tenants"]), "/tenants")).json()) as TenantList).map((t) => t.id)).toEqual([child]);
  });
});

describe("defaultPermissions and defaultRoles of tenant organizations (issue 15 point 3)", () => {
  it("creating a tenant offers the default roles on its organization; a member given them logs in with those tenants scopes", async () => {
    const extraRole = uniqueId("Support");
    const { createApp } = await import("../../src/worker/app");
    const { controlPlaneToken } = await import("../helpers/api");
    const app = createApp({ controlPlane: { defaultPermissions: ["read:tenants", "update:tenants"], defaultRoles: [extraRole] } });
    const id = uniqueId("dflt");
    const created = await app.fetch(
      new Request("http://localhost:8787/api/v2/tenants", {
        method: "POST",
        headers: { authorization: `Bearer ${await controlPlaneToken()}`, "content-type": "application/json" },
        body: JSON.stringify({ id, name: "Defaults" }),
      }),
      env,
      createExecutionContext(),
    );
    expect(created.status, await created.clone().text()).toBe(201);
    const org = await tenantOrganization(id);
    const roleIds = (org.metadata.default_roles ?? "").split(",").filter(Boolean);
    expect(roleIds).toHaveLength(2);
    const cp = onTenant(CP.tenantId);
    const roles = await Promise.all(roleIds.map((r) => cp.json<{ id: string; name: string }>("GET", `/roles/${r}`)));
    expect(roles.map((r) => r.name)).toEqual(["Tenant administrator", extraRole]);
    const permissions = await cp.json<{ permission_name: string }[]>("GET", `/roles/${roleIds[0]}/permissions`);
    expect(permissions.map((p) => p.permission_name).sort()).toEqual(["read:tenants", "update:tenants"]);
    // A second tenant reuses the same roles (looked up by name, never duplicated).
    const second = uniqueId("dflt");
    const again = await app.fetch(
      new Request("http://localhost:8787/api/v2/tenants", {
        method: "POST",
        headers: { authorization: `Bearer ${await controlPlaneToken()}`, "content-type": "application/json" },
        body: JSON.stringify({ id: second, name: "Defaults 2" }),
      }),
      env,
      createExecutionContext(),
    );
    expect(again.status).toBe(201);
    expect((await tenantOrganization(second)).metadata.default_roles).toBe(org.metadata.default_roles);
    const { token } = await memberToken(id, roleIds);
    expect(((await (await getWith(token, "/tenants")).json()) as TenantList).map((t) => t.id)).toEqual([id]);
  });

  it("without defaults a tenant organization names no roles", async () => {
    const id = await createTenant();
    expect((await tenantOrganization(id)).metadata.default_roles).toBeUndefined();
  });
});
