import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Sql } from "../../src/objects/sql";
import { seedTenant } from "../../src/objects/tenant/oauth/seed";
import type { TenantObject } from "../../src/objects/tenant/tenant-object";
import { MANAGEMENT_SCOPES } from "../../src/shared/scopes";
import type { TenantSeed } from "../../src/shared/types";
import { uniqueId } from "../helpers/api";

/**
 * Issue 30: the console's operator roles are seeded once; a release that adds a management scope (read:stats
 * came with the console's home page) gives it to the seeded roles whose verbs cover it, once, without undoing
 * a permission an operator removed on purpose. Runs the seed inside a scratch tenant object (not the control
 * plane other files share).
 */
const AUDIENCE = "urn:gatehouse:management";
const seedWith = (scopes: string[]): TenantSeed => ({
  tenantId: "scratch",
  signingKey: null,
  managementAudience: AUDIENCE,
  managementScopes: scopes,
  console: { client_id: uniqueId("console"), name: "Console", client_secret_enc: "x", callbacks: ["http://localhost/admin/callback"], logout_urls: [] },
});

type RoleScopes = Record<string, string[]>;
const roleScopes = (state: DurableObjectState): RoleScopes => {
  const rows = state.storage.sql.exec(`SELECT r.name AS name, p.permission_name AS p FROM roles r JOIN role_permissions p ON p.role_id = r.id WHERE p.permission_name = 'read:stats'`).toArray();
  const out: RoleScopes = {};
  for (const row of rows) {
    const name = String(row.name);
    out[name] = [...(out[name] ?? []), String(row.p)];
  }
  return out;
};

describe("operator roles across a release that adds a scope", () => {
  it("a new read scope reaches Admin, Editor and Viewer once; a permission removed afterwards stays removed", async () => {
    const stub = env.TENANT.getByName(uniqueId("oproles"));
    await runInDurableObject(stub, (_o: TenantObject, state) => {
      const sql = new Sql(state.storage.sql);
      const before = [...MANAGEMENT_SCOPES].filter((s) => s !== "read:stats");
      // The release before: no read:stats anywhere.
      seedTenant(sql, seedWith(before), Date.now());
      expect(roleScopes(state)).toEqual({});
      // The release that adds it.
      seedTenant(sql, seedWith([...MANAGEMENT_SCOPES]), Date.now());
      expect(roleScopes(state)).toEqual({ "Gatehouse Admin": ["read:stats"], "Gatehouse Editor": ["read:stats"], "Gatehouse Viewer": ["read:stats"] });
      // An operator takes it from the Viewer; the next seed (every isolate start) leaves that alone.
      state.storage.sql.exec(
        "DELETE FROM role_permissions WHERE permission_name = 'read:stats' AND role_id = (SELECT id FROM roles WHERE name = 'Gatehouse Viewer')",
      );
      seedTenant(sql, seedWith([...MANAGEMENT_SCOPES]), Date.now());
      expect(roleScopes(state)).toEqual({ "Gatehouse Admin": ["read:stats"], "Gatehouse Editor": ["read:stats"] });
    });
  });

  it("a deployment seeded before the record existed takes its Admin role's permissions as what it has seen", async () => {
    const stub = env.TENANT.getByName(uniqueId("oproles"));
    await runInDurableObject(stub, (_o: TenantObject, state) => {
      const sql = new Sql(state.storage.sql);
      seedTenant(sql, seedWith([...MANAGEMENT_SCOPES].filter((s) => s !== "read:stats")), Date.now());
      // As an older release left it: roles without read:stats and no record of the scopes seen.
      state.storage.sql.exec("DELETE FROM _settings WHERE key = 'operator_role_scopes_seen'");
      seedTenant(sql, seedWith([...MANAGEMENT_SCOPES]), Date.now());
      expect(Object.keys(roleScopes(state)).sort()).toEqual(["Gatehouse Admin", "Gatehouse Editor", "Gatehouse Viewer"]);
    });
  });
});
