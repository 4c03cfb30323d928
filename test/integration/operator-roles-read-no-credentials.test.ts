import { env, runInDurableObject } from "cloudflare:test";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { Sql } from "../../src/objects/sql";
import { seedTenant } from "../../src/objects/tenant/oauth/seed";
import type { TenantObject } from "../../src/objects/tenant/tenant-object";
import { CONSOLE_CLIENT_ID } from "../../src/shared/console";
import { MANAGEMENT_SCOPES } from "../../src/shared/scopes";
import { CP, mgmt, uniqueId } from "../helpers/api";
import { operatorToken } from "../helpers/operators";

/**
 * Security review (review5): the seeded Viewer ("reads everything, changes nothing") held every `read:` scope,
 * read:client_keys included, and the management API returned every client's secret to it, the control
 * plane's own client among them: a Viewer's login read CONTROL_PLANE_CLIENT_SECRET and from then on held
 * every management scope on every tenant, for good. Now no token reads a system client's secret, and the
 * seeded Editor and Viewer hold no credential reads (client secrets, copy management tokens).
 */

const CP_CLIENT = "gatehouse-control-plane";

type Client = { client_id: string; name: string; client_secret?: string };
const listClients = async (token?: string) => (await (await mgmt("GET", "/clients?per_page=100", token ? { token } : {})).json()) as Client[];

describe("operators read no credentials they could act with", () => {
  it("a Viewer's token reads no client secret: neither the control plane's own client's nor any other", async () => {
    const token = await operatorToken("Gatehouse Viewer");
    const scope = String(decodeJwt(token).scope).split(" ");
    expect(scope).toContain("read:clients");
    expect(scope).not.toContain("read:client_keys");
    expect(scope).not.toContain("read:tenant_credentials");
    const clients = await listClients(token);
    expect(clients.map((c) => c.client_id)).toContain(CP_CLIENT);
    expect(clients.filter((c) => c.client_secret !== undefined)).toEqual([]);
    const one = (await (await mgmt("GET", `/clients/${CP_CLIENT}`, { token })).json()) as Client;
    expect(one.client_id).toBe(CP_CLIENT);
    expect(one.client_secret).toBeUndefined();
    expect(JSON.stringify(clients)).not.toContain(CP.clientSecret);
    // Nor a management token for a per-tenant copy.
    const copy = await mgmt("POST", "/tenants/any-copy/management-token", { token });
    expect(copy.status).toBe(403);
  });

  it("no token reads a system client's secret, an Admin's or the control-plane client's own; other secrets stay readable with read:client_keys", async () => {
    const admin = await operatorToken("Gatehouse Admin");
    expect(String(decodeJwt(admin).scope).split(" ")).toContain("read:client_keys");
    const created = (await (await mgmt("POST", "/clients", { body: { name: `m2m-${uniqueId()}`, app_type: "non_interactive" } })).json()) as Client;
    for (const token of [admin, undefined]) {
      const clients = await listClients(token);
      const system = clients.filter((c) => c.client_id === CP_CLIENT || c.client_id === CONSOLE_CLIENT_ID);
      expect(system).toHaveLength(2);
      expect(system.map((c) => c.client_secret)).toEqual([undefined, undefined]);
      expect(clients.find((c) => c.client_id === created.client_id)?.client_secret).toBe(created.client_secret);
      for (const id of [CP_CLIENT, CONSOLE_CLIENT_ID]) {
        const one = (await (await mgmt("GET", `/clients/${id}`, token ? { token } : {})).json()) as Client;
        expect(one.client_secret).toBeUndefined();
      }
    }
  });
});

describe("a deployment seeded before the credential reads were withdrawn", () => {
  it("the next seed takes read:client_keys and read:tenant_credentials from its Editor and Viewer once; Admin keeps them", async () => {
    const credentialHolders = (state: DurableObjectState) =>
      state.storage.sql
        .exec("SELECT r.name AS name, p.permission_name AS p FROM roles r JOIN role_permissions p ON p.role_id = r.id WHERE p.permission_name IN ('read:client_keys', 'read:tenant_credentials') ORDER BY r.name, p.permission_name")
        .toArray()
        .map((row) => `${row.name}: ${row.p}`);
    const seed = {
      tenantId: "scratch",
      signingKey: null,
      managementAudience: CP.audience,
      managementScopes: [...MANAGEMENT_SCOPES],
      console: { client_id: uniqueId("console"), name: "Console", client_secret_enc: "x", callbacks: ["http://localhost/admin/callback"], logout_urls: [] },
    };
    await runInDurableObject(env.TENANT.getByName(uniqueId("oproles")), (_o: TenantObject, state) => {
      const sql = new Sql(state.storage.sql);
      seedTenant(sql, seed, Date.now());
      const admin = ["Gatehouse Admin: read:client_keys", "Gatehouse Admin: read:tenant_credentials"];
      expect(credentialHolders(state)).toEqual(admin);
      // As an older release left it: every read scope in Editor and Viewer, and no record of the withdrawal.
      for (const role of ["Gatehouse Editor", "Gatehouse Viewer"]) {
        for (const scope of ["read:client_keys", "read:tenant_credentials"]) {
          state.storage.sql.exec(
            "INSERT INTO role_permissions (role_id, resource_server_identifier, permission_name, created_at) SELECT id, ?, ?, 0 FROM roles WHERE name = ?",
            CP.audience,
            scope,
            role,
          );
        }
      }
      state.storage.sql.exec("DELETE FROM _settings WHERE key = 'operator_roles_credential_reads_withdrawn'");
      seedTenant(sql, seed, Date.now());
      expect(credentialHolders(state)).toEqual(admin);
      // Given back on purpose afterwards, it stays.
      state.storage.sql.exec(
        "INSERT INTO role_permissions (role_id, resource_server_identifier, permission_name, created_at) SELECT id, ?, 'read:client_keys', 0 FROM roles WHERE name = 'Gatehouse Editor'",
        CP.audience,
      );
      seedTenant(sql, seed, Date.now());
      expect(credentialHolders(state)).toEqual(["Gatehouse Admin: read:client_keys", "Gatehouse Admin: read:tenant_credentials", "Gatehouse Editor: read:client_keys"]);
    });
  });
});
