import { describe, expect, it } from "vitest";
import { OPERATOR_ROLES, operatorRoleScopes } from "../../../src/shared/console";
import { MANAGEMENT_SCOPES } from "../../../src/shared/scopes";
import type { ResourceServerRecord } from "../../../src/shared/schemas/resource-servers";
import { safeReturnTo } from "../../../src/worker/admin/login";
import { grantableUserScopes } from "../../../src/worker/oauth/tokens/user-scopes";

const managementApi = {
  identifier: "urn:gatehouse:management",
  is_system: true,
  enforce_policies: false,
  scopes: [...MANAGEMENT_SCOPES, "read:current_user"].map((value) => ({ value, description: value })),
} as unknown as ResourceServerRecord;

describe("console operator scopes (issue 30)", () => {
  it("a user's token to the management API carries management scopes only as the console's operator, and only those held", () => {
    const requested = ["openid", "read:clients", "create:clients", "delete:tenants", "read:current_user"];
    const held = ["read:clients", "create:clients"];
    expect(grantableUserScopes(requested, managementApi, held)).toEqual(["openid", "read:current_user"]);
    expect(grantableUserScopes(requested, managementApi, held, { consoleOperator: true })).toEqual(["openid", "read:clients", "create:clients", "read:current_user"]);
    // A permission the API does not define is never released.
    expect(grantableUserScopes(["read:nonsense"], managementApi, ["read:nonsense"], { consoleOperator: true })).toEqual([]);
  });

  it("the seeded roles: Admin holds every scope, Editor no delete, Viewer only reads", () => {
    const [admin, editor, viewer] = OPERATOR_ROLES.map((r) => operatorRoleScopes(r.verbs, MANAGEMENT_SCOPES));
    expect(admin).toEqual([...MANAGEMENT_SCOPES]);
    expect(editor?.some((s) => s.startsWith("delete:"))).toBe(false);
    expect(editor).toContain("create:clients");
    expect(viewer?.every((s) => s.startsWith("read:"))).toBe(true);
    expect(viewer).toContain("read:users");
    // Credential reads (client secrets, copy tokens) are Admin's only: a Viewer changes nothing.
    for (const scope of ["read:client_keys", "read:tenant_credentials"]) {
      expect(admin).toContain(scope);
      expect(editor).not.toContain(scope);
      expect(viewer).not.toContain(scope);
    }
  });

  it("the login's return path stays inside the console (no open redirect)", () => {
    expect(safeReturnTo("/admin/t/acme/users?q=x")).toBe("/admin/t/acme/users?q=x");
    expect(safeReturnTo("/admin")).toBe("/admin");
    for (const bad of ["//evil.example/admin", "https://evil.example/admin", "/administrator", "/admin\\@evil", "/u2/login", undefined]) {
      expect(safeReturnTo(bad)).toBe("/admin");
    }
  });
});
