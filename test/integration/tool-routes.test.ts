import { beforeAll, describe, expect, it } from "vitest";
import { mgmt } from "../helpers/api";
import { seedClient } from "../helpers/flows";
import { expectRefusals, type ReachKit, reachKit } from "../helpers/route-reach";

/**
 * Issue 28 (first part): reads the tools make on every run. Terraform's auth0_client_grant reads
 * GET /client-grants/{id} and plans a re-creation when it is 404; auth0-deploy-cli reads
 * /organizations/{id}/connections and drops the organization from its export when that fails; a served
 * path asked with a verb it lacks is 405 with Allow, never a 404 that reads as "gone".
 */

const SCOPES = ["read:client_grants", "create:client_grants", "read:organizations", "create:organizations", "read:organization_connections", "create:organization_connections", "update:organization_connections", "delete:organization_connections", "create:connections", "create:resource_servers", "read:clients"];
let kit: ReachKit;
const as = (token: string) => ({ token, headers: { "tenant-id": kit.tenant } });

beforeAll(async () => {
  kit = await reachKit(SCOPES);
});

describe("GET /client-grants/{id}", () => {
  it("answers the grant in the reference shape, and 404 inexistent_client_grant for an unknown id", async () => {
    const client = await seedClient(kit.tenant, { grant_types: ["client_credentials"] });
    const api = await mgmt("POST", "/resource-servers", { ...as(kit.allowed), body: { identifier: "https://tools.example/api", scopes: [{ value: "read:things" }] } });
    expect(api.status).toBe(201);
    const created = await mgmt("POST", "/client-grants", { ...as(kit.allowed), body: { client_id: client.client_id, audience: "https://tools.example/api", scope: ["read:things"] } });
    expect(created.status).toBe(201);
    const grant = (await created.json()) as { id: string };
    const read = await mgmt("GET", `/client-grants/${grant.id}`, as(kit.allowed));
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({ id: grant.id, client_id: client.client_id, audience: "https://tools.example/api", scope: ["read:things"] });
    const missing = await mgmt("GET", "/client-grants/cgr_nothing", as(kit.allowed));
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ statusCode: 404, errorCode: "inexistent_client_grant" });
  });

  it("refuses no token, a token without read:client_grants, another tenant's, an end user's and a revoked one", async () => {
    await expectRefusals(kit, "GET", "/client-grants/cgr_any", "read:client_grants");
  });
});

describe("/organizations/{id}/connections (the newer name of enabled_connections)", () => {
  it("adds, lists, reads, changes and removes an organization's connection exactly as enabled_connections does", async () => {
    const org = (await (await mgmt("POST", "/organizations", { ...as(kit.allowed), body: { name: `tools-${crypto.randomUUID().slice(0, 8)}` } })).json()) as { id: string };
    const conn = await mgmt("POST", "/connections", { ...as(kit.allowed), body: { name: `db-${crypto.randomUUID().slice(0, 8)}`, strategy: "auth0" } });
    expect(conn.status).toBe(201);
    const connection = (await conn.json()) as { id: string; name: string };
    const added = await mgmt("POST", `/organizations/${org.id}/connections`, { ...as(kit.allowed), body: { connection_id: connection.id, assign_membership_on_login: true } });
    expect(added.status).toBe(201);
    expect(await added.json()).toMatchObject({ connection_id: connection.id, assign_membership_on_login: true, connection: { name: connection.name, strategy: "auth0" } });
    const list = await mgmt("GET", `/organizations/${org.id}/connections`, as(kit.allowed));
    const legacy = await mgmt("GET", `/organizations/${org.id}/enabled_connections`, as(kit.allowed));
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual(await legacy.json());
    // Regression (the deploy-cli round trip): the SDK's paged read (include_totals=true, what node-auth0 v5+
    // sends by default) takes the items from `connections`; under `enabled_connections` it saw none and the
    // export lost every organization's connections.
    const paged = (await (await mgmt("GET", `/organizations/${org.id}/connections?include_totals=true`, as(kit.allowed))).json()) as Record<string, unknown>;
    expect(paged).toMatchObject({ connections: [expect.objectContaining({ connection_id: connection.id })], total: 1 });
    expect(paged).not.toHaveProperty("enabled_connections");
    const legacyPaged = (await (await mgmt("GET", `/organizations/${org.id}/enabled_connections?include_totals=true`, as(kit.allowed))).json()) as Record<string, unknown>;
    expect(legacyPaged).toMatchObject({ enabled_connections: [expect.objectContaining({ connection_id: connection.id })], total: 1 });
    const changed = await mgmt("PATCH", `/organizations/${org.id}/connections/${connection.id}`, { ...as(kit.allowed), body: { assign_membership_on_login: false } });
    expect(changed.status).toBe(200);
    expect(await (await mgmt("GET", `/organizations/${org.id}/enabled_connections/${connection.id}`, as(kit.allowed))).json()).toMatchObject({ assign_membership_on_login: false });
    expect((await mgmt("DELETE", `/organizations/${org.id}/connections/${connection.id}`, as(kit.allowed))).status).toBe(204);
    expect((await mgmt("GET", `/organizations/${org.id}/connections/${connection.id}`, as(kit.allowed))).status).toBe(404);
  });

  it("refuses every kind of wrong caller on each of the five operations", async () => {
    await expectRefusals(kit, "GET", "/organizations/org_x/connections", "read:organization_connections");
    await expectRefusals(kit, "POST", "/organizations/org_x/connections", "create:organization_connections", { connection_id: "con_x" });
    await expectRefusals(kit, "GET", "/organizations/org_x/connections/con_x", "read:organization_connections");
    await expectRefusals(kit, "PATCH", "/organizations/org_x/connections/con_x", "update:organization_connections", { show_as_button: true });
    await expectRefusals(kit, "DELETE", "/organizations/org_x/connections/con_x", "delete:organization_connections");
  });
});

describe("405 Method Not Allowed", () => {
  it("a served path asked with a verb it lacks answers 405, the management error shape and Allow", async () => {
    const res = await mgmt("PUT", "/client-grants/cgr_any", as(kit.allowed));
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("DELETE, GET, HEAD, PATCH");
    expect(await res.json()).toMatchObject({ statusCode: 405, error: "Method Not Allowed", errorCode: "method_not_allowed" });
    const collection = await mgmt("DELETE", "/client-grants", as(kit.allowed));
    expect(collection.status).toBe(405);
    expect(collection.headers.get("allow")).toBe("GET, HEAD, POST");
  });

  it("an unknown path stays 404 and a wrong verb without a token stays 401", async () => {
    expect((await mgmt("GET", "/no-such-resource", as(kit.allowed))).status).toBe(404);
    expect((await mgmt("PUT", "/client-grants/cgr_any", { token: "", headers: { "tenant-id": kit.tenant } })).status).toBe(401);
  });
});
