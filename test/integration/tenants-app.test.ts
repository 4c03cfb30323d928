import { describe, expect, it } from "vitest";
import { CP, call, createTenant, mgmt, uniqueId } from "../helpers/api";
import { seedClient, tokenForm } from "../helpers/flows";
import { tenantManagementToken } from "../helpers/management";
import { mintWithTenantKey } from "../helpers/mint";
import { controlPlaneRole, CP_HOST, memberToken } from "../helpers/tenant-members";

/** A request to the multi-tenancy management app (mounted at /management). */
function app(method: string, path: string, token: string | undefined, body?: unknown): Promise<Response> {
  return call(`/management${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** A control-plane M2M client's token holding exactly `scopes`, and what revokes it. */
async function controlPlaneM2m(scopes: string[]) {
  const client = await seedClient(CP.tenantId, { grant_types: ["client_credentials"] });
  const grant = await mgmt("POST", "/client-grants", { body: { client_id: client.client_id, audience: CP.audience, scope: scopes } });
  expect(grant.status).toBe(201);
  const res = await tokenForm({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience: CP.audience }, {}, CP_HOST);
  expect(res.status).toBe(200);
  return { token: ((await res.json()) as { access_token: string }).access_token, client };
}

const ALL = ["read:tenants", "create:tenants", "update:tenants", "delete:tenants"];
type Page = { tenants: { id: string }[]; total: number; page: number; per_page: number };

describe("the multi-tenancy management app at /management/tenants (SPEC §4.2; issue 15 point 6)", () => {
  it("lists tenants as {tenants, total, page, per_page}: page 1 and 50 per page by default, 1-based pages", async () => {
    const { token } = await controlPlaneM2m(ALL);
    await createTenant();
    await createTenant();
    const first = await app("GET", "/tenants", token);
    expect(first.status).toBe(200);
    const body = (await first.json()) as Page;
    expect(Object.keys(body).sort()).toEqual(["page", "per_page", "tenants", "total"]);
    expect(body).toMatchObject({ page: 1, per_page: 50 });
    expect(body.total).toBeGreaterThanOrEqual(3);
    const one = (await (await app("GET", "/tenants?page=1&per_page=1", token)).json()) as Page;
    const two = (await (await app("GET", "/tenants?page=2&per_page=1", token)).json()) as Page;
    expect(one.tenants).toHaveLength(1);
    expect(two.tenants).toHaveLength(1);
    expect(two.page).toBe(2);
    expect(one.tenants[0]?.id).not.toBe(two.tenants[0]?.id);
    expect(((await (await app("GET", "/tenants?per_page=100", token)).json()) as Page).per_page).toBe(100);
  });

  it("refuses out-of-range paging with 400 invalid_query_string", async () => {
    const { token } = await controlPlaneM2m(ALL);
    for (const query of ["page=0", "page=-1", "page=abc", "per_page=0", "per_page=101", "per_page=1.5"]) {
      const res = await app("GET", `/tenants?${query}`, token);
      expect(res.status, query).toBe(400);
      expect(((await res.json()) as { errorCode: string }).errorCode, query).toBe("invalid_query_string");
    }
  });

  it("creates ({tenant}, 201), reads ({tenant}), updates ({tenant}) and deletes ({success: true}) through the same tenants facade", async () => {
    const { token } = await controlPlaneM2m(ALL);
    const id = uniqueId("app");
    const created = await app("POST", "/tenants", token, { id, name: "From the app", friendly_name: "App tenant" });
    expect(created.status, await created.clone().text()).toBe(201);
    expect(((await created.json()) as { tenant: { id: string; friendly_name: string } }).tenant).toMatchObject({ id, friendly_name: "App tenant" });
    // The same tenant as /api/v2/tenants sees it, with its organization on the control plane.
    expect((await mgmt("GET", `/tenants/${id}`)).status).toBe(200);
    expect((await mgmt("GET", `/organizations/name/${id}`)).status).toBe(200);
    const read = (await (await app("GET", `/tenants/${id}`, token)).json()) as { tenant: { id: string } };
    expect(read.tenant.id).toBe(id);
    const patched = await app("PATCH", `/tenants/${id}`, token, { friendly_name: "Renamed" });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as { tenant: { friendly_name: string } }).tenant.friendly_name).toBe("Renamed");
    const deleted = await app("DELETE", `/tenants/${id}`, token);
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ success: true });
    expect((await app("GET", `/tenants/${id}`, token)).status).toBe(404);
    expect((await mgmt("GET", `/organizations/name/${id}`)).status).toBe(404);
  });

  it("POST needs id and name; unknown fields and a duplicate id are refused", async () => {
    const { token } = await controlPlaneM2m(ALL);
    expect((await app("POST", "/tenants", token, { id: uniqueId("app") })).status).toBe(400);
    expect((await app("POST", "/tenants", token, { id: uniqueId("app"), name: "x", surprise: true })).status).toBe(400);
    expect((await app("POST", "/tenants", token, "{not json")).status).toBe(400);
    const id = await createTenant();
    expect((await app("POST", "/tenants", token, { id, name: "again" })).status).toBe(409);
    expect((await app("DELETE", `/tenants/${CP.tenantId}`, token)).status).toBe(400);
  });

  it("is reachable only with a main-tenant token without org_id holding the route's scope", async () => {
    const target = await createTenant();
    const paths: [string, string, unknown?][] = [
      ["GET", "/tenants"],
      ["POST", "/tenants", { id: uniqueId("app"), name: "x" }],
      ["GET", `/tenants/${target}`],
      ["PATCH", `/tenants/${target}`, { friendly_name: "x" }],
      ["DELETE", `/tenants/${target}`],
    ];
    const lacking = (await controlPlaneM2m(["read:clients"])).token;
    const child = await tenantManagementToken(await createTenant(), ALL);
    const endUser = await mintWithTenantKey(CP.tenantId, { iss: CP.issuer, aud: CP.audience, scope: ALL.join(" "), sub: "auth0|someone", gty: "password" });
    const member = (await memberToken(target, [await controlPlaneRole(["read:tenants", "update:tenants"])])).token;
    const toRevoke = await controlPlaneM2m(ALL);
    const revocation = await call("/oauth/revoke", {
      method: "POST",
      host: CP_HOST,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: toRevoke.token, client_id: toRevoke.client.client_id, client_secret: toRevoke.client.client_secret }).toString(),
    });
    expect(revocation.status).toBe(200);
    for (const [method, path, body] of paths) {
      const where = `${method} ${path}`;
      expect((await app(method, path, undefined, body)).status, `${where}: no token`).toBe(401);
      expect((await app(method, path, lacking, body)).status, `${where}: scope missing`).toBe(403);
      const fromChild = await app(method, path, child, body);
      expect(fromChild.status, `${where}: a child tenant's token`).toBe(403);
      expect(((await fromChild.json()) as { message: string }).message).toBe("Cross-tenant management requires a control-plane token");
      expect((await app(method, path, endUser, body)).status, `${where}: an end user's token`).toBe(403);
      const withOrg = await app(method, path, member, body);
      expect(withOrg.status, `${where}: a token with org_id`).toBe(403);
      expect(((await withOrg.json()) as { message: string }).message).toContain("without org_id");
      expect((await app(method, path, toRevoke.token, body)).status, `${where}: a revoked token`).toBe(403);
    }
    // Nothing above changed the target.
    expect((await mgmt("GET", `/tenants/${target}`)).status).toBe(200);
  });
});
