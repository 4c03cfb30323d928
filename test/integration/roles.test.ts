import { describe, expect, it } from "vitest";
import { call, createTenant, mgmt } from "../helpers/api";
import { logsOf, relay } from "../helpers/outbox";
import { createRbacApi, createRole, createUser, expectError, on, perms, type RoleBody, userPath } from "../helpers/roles";
import { tick } from "../helpers/management";

/** /api/v2/roles (SPEC §4.2 "Clients, connections, roles, resource servers", §4.3), through the front worker. */

describe("roles CRUD", () => {
  it("creates a role with a rol_ id, name and description, reads, renames and deletes it", async () => {
    const t = on(await createTenant());
    const created = await t.call("POST", "/roles", { name: "Admin", description: "Can do everything" });
    expect(created.status).toBe(201);
    const role = (await created.json()) as RoleBody;
    expect(role).toEqual({ id: expect.stringMatching(/^rol_[A-Za-z0-9]+$/), name: "Admin", description: "Can do everything" });
    expect(await (await t.call("GET", `/roles/${role.id}`)).json()).toEqual(role);

    const patched = await t.call("PATCH", `/roles/${role.id}`, { name: "Administrator" });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toEqual({ ...role, name: "Administrator" });
    const cleared = await t.call("PATCH", `/roles/${role.id}`, { description: null });
    expect(await cleared.json()).toEqual({ id: role.id, name: "Administrator" });

    expect((await t.call("DELETE", `/roles/${role.id}`)).status).toBe(204);
    await expectError(await t.call("GET", `/roles/${role.id}`), 404, "inexistent_role");
    await expectError(await t.call("DELETE", `/roles/${role.id}`), 404, "inexistent_role");
  });

  it("a role without a description shows none", async () => {
    const t = on(await createTenant());
    expect(await (await t.call("POST", "/roles", { name: "Plain" })).json()).toEqual({ id: expect.any(String), name: "Plain" });
  });

  it("the name is required, not blank, and unique in the tenant: 400 and 409, on create and rename", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    await expectError(await t.call("POST", "/roles", { description: "no name" }), 400, "invalid_body", /name/);
    await expectError(await t.call("POST", "/roles", { name: "   " }), 400, "invalid_body");
    await expectError(await t.call("POST", "/roles", { name: 42 }), 400, "invalid_body");
    const first = await createRole(tenant, "Editor");
    await expectError(await t.call("POST", "/roles", { name: "Editor" }), 409, "role_conflict", /Editor/);
    const second = await createRole(tenant, "Viewer");
    await expectError(await t.call("PATCH", `/roles/${second.id}`, { name: "Editor" }), 409, "role_conflict");
    // Renaming a role to its own name is not a conflict.
    expect((await t.call("PATCH", `/roles/${first.id}`, { name: "Editor" })).status).toBe(200);
    // Another tenant may use the same name.
    await createRole(await createTenant(), "Editor");
  });

  it("bad input is a 400 in the documented shape, never a 500 or a partial write", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    await expectError(await t.call("POST", "/roles", "{not json"), 400, "invalid_body");
    await expectError(await t.call("POST", "/roles", { name: "x", unknown: true }), 400, "invalid_body", /unknown/);
    await expectError(await t.call("POST", "/roles", { name: "x".repeat(201) }), 400, "invalid_body");
    await expectError(await t.call("POST", "/roles", { name: "x", type: "organization" }), 400, "invalid_body");
    await expectError(await t.call("POST", "/roles", { name: "x", description: { nested: true } }), 400, "invalid_body");
    await expectError(await t.call("POST", "/roles", ["x"]), 400, "invalid_body");
    const big = await mgmt("POST", "/roles", { headers: { "tenant-id": tenant }, body: { name: "y", description: "d".repeat(200_000) } });
    expect(big.status).toBe(413);
    // Odd but valid text is stored and read back as sent; a lone surrogate never causes a 500.
    const odd = await t.call("POST", "/roles", { name: "Ädmin ✓ 𝒳 \u202e", description: "\u0000 null byte" });
    expect(odd.status).toBe(201);
    expect(((await odd.json()) as RoleBody).name).toBe("Ädmin ✓ 𝒳 \u202e");
    const surrogate = await t.call("POST", "/roles", '{"name":"lone \\ud800"}');
    expect(surrogate.status).toBeLessThan(500);
    expect(((await (await t.call("GET", "/roles?include_totals=true")).json()) as { total: number }).total).toBe(surrogate.status === 201 ? 2 : 1);
  });

  it("an unknown role is 404 inexistent_role on every route", async () => {
    const tenant = await createTenant();
    const api = await createRbacApi(tenant, ["read:x"]);
    const t = on(tenant);
    const missing = "rol_nothing";
    const answers = [
      await t.call("GET", `/roles/${missing}`),
      await t.call("PATCH", `/roles/${missing}`, { name: "x" }),
      await t.call("DELETE", `/roles/${missing}`),
      await t.call("GET", `/roles/${missing}/permissions`),
      await t.call("POST", `/roles/${missing}/permissions`, { permissions: perms(api.identifier, "read:x") }),
      await t.call("DELETE", `/roles/${missing}/permissions`, { permissions: perms(api.identifier, "read:x") }),
      await t.call("GET", `/roles/${missing}/users`),
      await t.call("POST", `/roles/${missing}/users`, { users: ["auth0|x"] }),
    ];
    for (const res of answers) await expectError(res, 404, "inexistent_role", /role does not exist/);
  });

  it("no tenant sees another tenant's roles", async () => {
    const mine = await createTenant();
    const theirs = await createTenant();
    const role = await createRole(mine, "Private");
    await expectError(await on(theirs).call("GET", `/roles/${role.id}`), 404, "inexistent_role");
    await expectError(await on(theirs).call("PATCH", `/roles/${role.id}`, { name: "Stolen" }), 404, "inexistent_role");
    await expectError(await on(theirs).call("DELETE", `/roles/${role.id}`), 404, "inexistent_role");
    expect(await (await on(theirs).call("GET", "/roles")).json()).toEqual([]);
    expect(await (await on(mine).call("GET", `/roles/${role.id}`)).json()).toEqual(role);
  });

  it("deleting a role removes its permissions and its assignments to users", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    const api = await createRbacApi(tenant, ["read:x"]);
    const role = await createRole(tenant);
    const keep = await createRole(tenant);
    const user = await createUser(tenant);
    expect((await t.call("POST", `/roles/${role.id}/permissions`, { permissions: perms(api.identifier, "read:x") })).status).toBe(201);
    expect((await t.call("POST", userPath(user.user_id, "/roles"), { roles: [role.id, keep.id] })).status).toBe(204);
    expect(((await (await t.call("GET", userPath(user.user_id, "/permissions"))).json()) as unknown[]).length).toBe(1);

    expect((await t.call("DELETE", `/roles/${role.id}`)).status).toBe(204);
    expect(await (await t.call("GET", userPath(user.user_id, "/roles"))).json()).toEqual([keep]);
    expect(await (await t.call("GET", userPath(user.user_id, "/permissions"))).json()).toEqual([]);
    // A new role with the old name starts empty.
    const again = await createRole(tenant, role.name);
    expect(await (await t.call("GET", `/roles/${again.id}/permissions`)).json()).toEqual([]);
    expect(await (await t.call("GET", `/roles/${again.id}/users`)).json()).toEqual([]);
  });

  it("records role.created, role.updated and role.deleted audit events (sapi), and fapi for a refused write", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    const role = await createRole(tenant, "Audited");
    await t.call("PATCH", `/roles/${role.id}`, { description: "now described" });
    await t.call("DELETE", `/roles/${role.id}`);
    await t.call("POST", "/roles", { name: "Audited2" });
    await t.call("POST", "/roles", { name: "Audited2" });
    await relay(tenant);
    const logs = await logsOf(tenant);
    const of = (type: string) => logs.filter((l) => l.details.event_type === type);
    expect(of("role.created").find((l) => l.type === "sapi" && l.details.target?.id === role.id)?.details).toMatchObject({ target: { type: "role", id: role.id, after: { name: "Audited" } }, response: { status_code: 201 } });
    expect(of("role.updated")[0]?.details).toMatchObject({ target: { id: role.id, diff: { description: { before: null, after: "now described" } } } });
    expect(of("role.deleted")[0]?.details).toMatchObject({ target: { id: role.id, before: { name: "Audited" } }, response: { status_code: 204 } });
    expect(of("role.created").find((l) => l.type === "fapi")?.details).toMatchObject({ response: { status_code: 409 } });
  });
});

describe("GET /roles paging (SPEC §4.3)", () => {
  async function tenantWithRoles(names: string[]): Promise<{ tenant: string; roles: RoleBody[] }> {
    const tenant = await createTenant();
    const roles: RoleBody[] = [];
    for (const name of names) {
      roles.push(await createRole(tenant, name));
      await tick();
    }
    return { tenant, roles: roles.reverse() };
  }

  it("offset mode: a bare array newest first, or the include_totals envelope", async () => {
    const { tenant, roles } = await tenantWithRoles(["a", "b", "c", "d", "e"]);
    const t = on(tenant);
    expect(await (await t.call("GET", "/roles")).json()).toEqual(roles);
    expect(await (await t.call("GET", "/roles?per_page=2&page=1")).json()).toEqual(roles.slice(2, 4));
    expect(await (await t.call("GET", "/roles?per_page=2&page=2&include_totals=true")).json()).toEqual({
      roles: roles.slice(4),
      start: 4,
      limit: 2,
      length: 1,
      total: 5,
    });
    // sort is ignored in offset mode: the order is fixed.
    expect(await (await t.call("GET", "/roles?sort=name:1")).json()).toEqual(roles);
  });

  it("checkpoint mode walks every role once, {roles, next}, and the last page has no next", async () => {
    const { tenant, roles } = await tenantWithRoles(["a", "b", "c", "d", "e"]);
    const t = on(tenant);
    const seen: RoleBody[] = [];
    let from: string | undefined;
    let pages = 0;
    do {
      const res = await t.call("GET", `/roles?take=2${from ? `&from=${from}` : ""}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { roles: RoleBody[]; next?: string };
      seen.push(...body.roles);
      from = body.next;
      pages++;
      if (!from) expect(Object.keys(body)).toEqual(["roles"]);
    } while (from);
    expect(pages).toBe(3);
    expect(seen).toEqual(roles);
    // include_totals is ignored in checkpoint mode.
    expect(Object.keys(await (await t.call("GET", "/roles?take=10&include_totals=true")).json())).toEqual(["roles"]);
  });

  it("sort combined with checkpoint mode is a 400; so are malformed cursors and bad numbers", async () => {
    const { tenant } = await tenantWithRoles(["a", "b", "c"]);
    const t = on(tenant);
    await expectError(await t.call("GET", "/roles?take=2&sort=name:1"), 400, "invalid_query_string", /sort/);
    const first = (await (await t.call("GET", "/roles?take=1")).json()) as { next: string };
    await expectError(await t.call("GET", `/roles?take=1&from=${first.next}&sort=created_at:-1`), 400, "invalid_query_string");
    await expectError(await t.call("GET", "/roles?from=not-a-cursor"), 400, "invalid_query_string");
    await expectError(await t.call("GET", "/roles?take=0"), 400, "invalid_query_string");
    await expectError(await t.call("GET", "/roles?per_page=101"), 400, "invalid_query_string");
    await expectError(await t.call("GET", "/roles?page=-1"), 400, "invalid_query_string");
  });

  it("name_filter keeps roles whose name contains the text, ignoring case, in both modes", async () => {
    const { tenant } = await tenantWithRoles(["Billing Admin", "billing viewer", "Support", "Admin"]);
    const t = on(tenant);
    const names = async (query: string) => ((await (await t.call("GET", `/roles?${query}`)).json()) as RoleBody[]).map((r) => r.name);
    expect(await names("name_filter=BILLING")).toEqual(["billing viewer", "Billing Admin"]);
    expect(await names("name_filter=admin")).toEqual(["Admin", "Billing Admin"]);
    expect(await names("name_filter=%25")).toEqual([]);
    expect(await names("name_filter=nothing")).toEqual([]);
    const envelope = (await (await t.call("GET", "/roles?name_filter=admin&include_totals=true&per_page=1")).json()) as { total: number };
    expect(envelope.total).toBe(2);
    const walk = (await (await t.call("GET", "/roles?name_filter=admin&take=1")).json()) as { roles: RoleBody[]; next: string };
    expect(walk.roles.map((r) => r.name)).toEqual(["Admin"]);
    const rest = (await (await t.call("GET", `/roles?name_filter=admin&take=1&from=${walk.next}`)).json()) as { roles: RoleBody[]; next?: string };
    expect(rest.roles.map((r) => r.name)).toEqual(["Billing Admin"]);
    expect(rest.next).toBeUndefined();
  });
});

describe("the OpenAPI document", () => {
  it("lists every role route with the scope it requires", async () => {
    const spec = (await (await call("/api/v2/spec")).json()) as { paths: Record<string, Record<string, { "x-scope": string }>> };
    const scopeOf = (path: string, method: string) => spec.paths[path]?.[method]?.["x-scope"];
    expect(scopeOf("/roles", "post")).toBe("create:roles");
    expect(scopeOf("/roles", "get")).toBe("read:roles");
    expect(scopeOf("/roles/{id}", "get")).toBe("read:roles");
    expect(scopeOf("/roles/{id}", "patch")).toBe("update:roles");
    expect(scopeOf("/roles/{id}", "delete")).toBe("delete:roles");
    expect(scopeOf("/roles/{id}/permissions", "get")).toBe("read:roles");
    expect(scopeOf("/roles/{id}/permissions", "post")).toBe("update:roles");
    expect(scopeOf("/roles/{id}/permissions", "delete")).toBe("update:roles");
    expect(scopeOf("/roles/{id}/users", "get")).toBe("read:role_members");
    expect(scopeOf("/roles/{id}/users", "post")).toBe("create:role_members");
    expect(scopeOf("/users/{id}/roles", "get")).toBe("read:roles");
    expect(scopeOf("/users/{id}/roles", "post")).toBe("create:role_members");
    expect(scopeOf("/users/{id}/roles", "delete")).toBe("delete:role_members");
    expect(scopeOf("/users/{id}/permissions", "get")).toBe("read:users");
    expect(scopeOf("/users/{id}/permissions", "post")).toBe("update:users");
    expect(scopeOf("/users/{id}/permissions", "delete")).toBe("update:users");
  });
});
