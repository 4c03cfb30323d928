import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createTenant } from "../helpers/api";
import { logsOf, relay } from "../helpers/outbox";
import { createRbacApi, createRole, createUser, expectError, on, perms, type RoleBody, userPath } from "../helpers/roles";

/**
 * Role permissions, role members and a user's roles and permissions (SPEC §4.2 roles, §4.3; the reference
 * platform's /roles/{id}/permissions, /roles/{id}/users, /users/{id}/roles, /users/{id}/permissions).
 */

interface PermissionBody {
  resource_server_identifier: string;
  permission_name: string;
  resource_server_name: string;
  description?: string;
  sources?: { source_id: string; source_name: string; source_type: string }[];
}

describe("POST/GET/DELETE /roles/{id}/permissions", () => {
  it("adds permissions an API defines, lists them by API identifier then name with names and descriptions, removes them", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    const zeta = await createRbacApi(tenant, ["write:z", "read:z"]);
    const alpha = await createRbacApi(tenant, ["b:perm", "a:perm"]);
    const [first, second] = [alpha, zeta].sort((a, b) => (a.identifier < b.identifier ? -1 : 1)) as [typeof alpha, typeof zeta];
    const role = await createRole(tenant);
    const add = await t.call("POST", `/roles/${role.id}/permissions`, {
      permissions: [...perms(zeta.identifier, "write:z", "read:z"), ...perms(alpha.identifier, "b:perm", "a:perm", "a:perm")],
    });
    expect(add.status).toBe(201);
    expect(await add.text()).toBe("");
    const names = (api: { identifier: string }) => (api === alpha ? ["a:perm", "b:perm"] : ["read:z", "write:z"]);
    const expected = [first, second].flatMap((api) =>
      names(api).map((name) => ({ resource_server_identifier: api.identifier, permission_name: name, resource_server_name: api.name, description: `Can ${name}` })),
    );
    expect(await (await t.call("GET", `/roles/${role.id}/permissions`)).json()).toEqual(expected);
    // Adding what the role holds already changes nothing.
    expect((await t.call("POST", `/roles/${role.id}/permissions`, { permissions: perms(zeta.identifier, "read:z") })).status).toBe(201);
    expect(await (await t.call("GET", `/roles/${role.id}/permissions?include_totals=true`)).json()).toMatchObject({ total: 4, start: 0, limit: 50, length: 4 });

    const removed = await t.call("DELETE", `/roles/${role.id}/permissions`, { permissions: [...perms(zeta.identifier, "read:z"), ...perms(alpha.identifier, "never:held")] });
    expect(removed.status).toBe(204);
    const left = (await (await t.call("GET", `/roles/${role.id}/permissions`)).json()) as PermissionBody[];
    expect(left.map((p) => p.permission_name).sort()).toEqual(["a:perm", "b:perm", "write:z"]);
  });

  it("an unknown API is 404 and a permission the API does not define is 400; nothing is written", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    const api = await createRbacApi(tenant, ["read:x"]);
    const role = await createRole(tenant);
    const unknownApi = await t.call("POST", `/roles/${role.id}/permissions`, {
      permissions: [...perms(api.identifier, "read:x"), ...perms("https://nowhere.example.com/", "read:x")],
    });
    await expectError(unknownApi, 404, "inexistent_resource_server", /nowhere\.example\.com/);
    const undefinedScope = await t.call("POST", `/roles/${role.id}/permissions`, { permissions: perms(api.identifier, "read:x", "delete:x") });
    await expectError(undefinedScope, 400, "invalid_body", /delete:x/);
    expect(await (await t.call("GET", `/roles/${role.id}/permissions`)).json()).toEqual([]);
    // An API of another tenant does not exist here.
    const foreign = await createRbacApi(await createTenant(), ["read:x"]);
    await expectError(await t.call("POST", `/roles/${role.id}/permissions`, { permissions: perms(foreign.identifier, "read:x") }), 404, "inexistent_resource_server");
  });

  it("malformed bodies are 400: empty list, missing fields, unknown fields, wrong types", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    const role = await createRole(tenant);
    const path = `/roles/${role.id}/permissions`;
    for (const body of [
      {},
      { permissions: [] },
      { permissions: [{ resource_server_identifier: "x" }] },
      { permissions: [{ resource_server_identifier: "x", permission_name: "y", extra: 1 }] },
      { permissions: "read:x" },
      { permissions: [{ resource_server_identifier: 1, permission_name: "y" }] },
    ]) {
      await expectError(await t.call("POST", path, body), 400, "invalid_body");
      await expectError(await t.call("DELETE", path, body), 400, "invalid_body");
    }
  });

  it("pages in offset and checkpoint mode ({permissions, next}); sort with checkpoint mode is a 400", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    const scopes = ["p:1", "p:2", "p:3", "p:4", "p:5"];
    const api = await createRbacApi(tenant, scopes);
    const role = await createRole(tenant);
    await t.call("POST", `/roles/${role.id}/permissions`, { permissions: perms(api.identifier, ...scopes) });
    const page = (await (await t.call("GET", `/roles/${role.id}/permissions?per_page=2&page=1`)).json()) as PermissionBody[];
    expect(page.map((p) => p.permission_name)).toEqual(["p:3", "p:4"]);
    const walked: string[] = [];
    let from: string | undefined;
    do {
      const body = (await (await t.call("GET", `/roles/${role.id}/permissions?take=2${from ? `&from=${from}` : ""}`)).json()) as {
        permissions: PermissionBody[];
        next?: string;
      };
      walked.push(...body.permissions.map((p) => p.permission_name));
      from = body.next;
    } while (from);
    expect(walked).toEqual(scopes);
    await expectError(await t.call("GET", `/roles/${role.id}/permissions?take=2&sort=permission_name:1`), 400, "invalid_query_string", /sort/);
    await expectError(await t.call("GET", `/roles/${role.id}/permissions?from=garbage`), 400, "invalid_query_string");
    // A cursor minted by /roles is not a permissions cursor.
    await createRole(tenant);
    const rolesCursor = ((await (await t.call("GET", "/roles?take=1")).json()) as { next: string }).next;
    await expectError(await t.call("GET", `/roles/${role.id}/permissions?from=${rolesCursor}`), 400, "invalid_query_string");
  });
});

describe("POST/GET /roles/{id}/users", () => {
  it("assigns users and lists them newest first as {user_id, email, picture, name}, checkpoint-capable", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    const role = await createRole(tenant);
    const users = [await createUser(tenant), await createUser(tenant), await createUser(tenant)];
    expect((await t.call("POST", `/roles/${role.id}/users`, { users: [users[0]?.user_id] })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 5));
    expect((await t.call("POST", `/roles/${role.id}/users`, { users: [users[1]?.user_id, users[2]?.user_id, users[1]?.user_id] })).status).toBe(200);
    const list = (await (await t.call("GET", `/roles/${role.id}/users`)).json()) as Record<string, unknown>[];
    expect(list).toHaveLength(3);
    expect(list[2]).toEqual({ user_id: users[0]?.user_id, email: users[0]?.email, name: users[0]?.name });
    for (const member of list) expect(Object.keys(member).every((k) => ["user_id", "email", "picture", "name"].includes(k))).toBe(true);

    const first = (await (await t.call("GET", `/roles/${role.id}/users?take=2`)).json()) as { users: { user_id: string }[]; next: string };
    expect(first.users).toHaveLength(2);
    const second = (await (await t.call("GET", `/roles/${role.id}/users?take=2&from=${first.next}`)).json()) as { users: { user_id: string }[]; next?: string };
    expect(second.next).toBeUndefined();
    expect([...first.users, ...second.users].map((u) => u.user_id)).toEqual(list.map((u) => u.user_id));
    expect(await (await t.call("GET", `/roles/${role.id}/users?per_page=1&include_totals=true`)).json()).toMatchObject({ total: 3, length: 1, limit: 1 });
    expect(await (await t.call("GET", userPath(users[1]?.user_id as string, "/roles"))).json()).toEqual([role]);
    // The order is fixed: sort is ignored; a cursor of another list is a 400, as is a malformed one.
    expect(await (await t.call("GET", `/roles/${role.id}/users?sort=email:1`)).json()).toEqual(list);
    await createRole(tenant);
    const rolesCursor = ((await (await t.call("GET", "/roles?take=1")).json()) as { next: string }).next;
    await expectError(await t.call("GET", `/roles/${role.id}/users?take=1&from=${rolesCursor}`), 400, "invalid_query_string");
    await expectError(await t.call("GET", `/roles/${role.id}/users?from=%%%`), 400, "invalid_query_string");
    await expectError(await t.call("GET", `/roles/${role.id}/users?take=abc`), 400, "invalid_query_string");
  });

  it("an unknown user is 404 inexistent_user and nobody is assigned", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    const role = await createRole(tenant);
    const user = await createUser(tenant);
    const foreign = await createUser(await createTenant());
    await expectError(await t.call("POST", `/roles/${role.id}/users`, { users: [user.user_id, "auth0|nobody"] }), 404, "inexistent_user");
    await expectError(await t.call("POST", `/roles/${role.id}/users`, { users: [foreign.user_id] }), 404, "inexistent_user");
    expect(await (await t.call("GET", `/roles/${role.id}/users`)).json()).toEqual([]);
    await expectError(await t.call("POST", `/roles/${role.id}/users`, { users: [] }), 400, "invalid_body");
    await expectError(await t.call("POST", `/roles/${role.id}/users`, { users: "auth0|x" }), 400, "invalid_body");
  });

  it("take and per_page are capped at 100 (SPEC §4.3 rule 4)", async () => {
    const tenant = await createTenant();
    const role = await createRole(tenant);
    const now = Date.now();
    await runInDurableObject(env.TENANT.getByName(tenant), (_o, state) => {
      for (let i = 0; i < 105; i++) {
        const id = `auth0|bulk${String(i).padStart(3, "0")}`;
        state.storage.sql.exec(
          "INSERT INTO users (user_id, connection, email, created_at, updated_at) VALUES (?, 'Username-Password-Authentication', ?, ?, ?)",
          id,
          `bulk${i}@example.com`,
          now,
          now,
        );
      }
    });
    const ids = Array.from({ length: 105 }, (_, i) => `auth0|bulk${String(i).padStart(3, "0")}`);
    expect((await on(tenant).call("POST", `/roles/${role.id}/users`, { users: ids })).status).toBe(200);
    const taken = (await (await on(tenant).call("GET", `/roles/${role.id}/users?take=500`)).json()) as { users: unknown[]; next?: string };
    expect(taken.users).toHaveLength(100);
    expect(taken.next).toBeTruthy();
    const rest = (await (await on(tenant).call("GET", `/roles/${role.id}/users?take=500&from=${taken.next}`)).json()) as { users: unknown[]; next?: string };
    expect(rest.users).toHaveLength(5);
    expect(rest.next).toBeUndefined();
    expect(((await (await on(tenant).call("GET", `/roles/${role.id}/users?per_page=1000`)).json()) as unknown[]).length).toBe(100);
  });
});

describe("/users/{id}/roles and /users/{id}/permissions", () => {
  it("assigns, lists and removes a user's roles; an unknown role is 404 and nothing is assigned", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    const user = await createUser(tenant);
    const a = await createRole(tenant, "A", "first");
    await new Promise((r) => setTimeout(r, 5));
    const b = await createRole(tenant, "B");
    const path = userPath(user.user_id, "/roles");
    expect((await t.call("POST", path, { roles: [a.id, b.id, a.id] })).status).toBe(204);
    expect(await (await t.call("GET", path)).json()).toEqual([b, a]);
    expect(await (await t.call("GET", `${path}?per_page=1&page=1&include_totals=true`)).json()).toEqual({ roles: [a], start: 1, limit: 1, length: 1, total: 2 });
    // from/take are ignored here (an offset-only list never returns next).
    expect(await (await t.call("GET", `${path}?take=1`)).json()).toEqual([b, a]);
    await expectError(await t.call("POST", path, { roles: [a.id, "rol_missing"] }), 404, "inexistent_role");
    expect((await t.call("DELETE", path, { roles: [a.id, "rol_never_held"] })).status).toBe(204);
    expect(await (await t.call("GET", path)).json()).toEqual([b]);
    await expectError(await t.call("POST", path, { roles: [] }), 400, "invalid_body");
  });

  it("lists direct and role permissions once each with their sources, and removes direct ones only", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    const api = await createRbacApi(tenant, ["read:x", "write:x", "admin:x"]);
    const user = await createUser(tenant);
    const editor = await createRole(tenant, "Editor");
    const admin = await createRole(tenant, "Admin");
    await t.call("POST", `/roles/${editor.id}/permissions`, { permissions: perms(api.identifier, "read:x", "write:x") });
    await t.call("POST", `/roles/${admin.id}/permissions`, { permissions: perms(api.identifier, "write:x", "admin:x") });
    await t.call("POST", userPath(user.user_id, "/roles"), { roles: [editor.id, admin.id] });
    const direct = await t.call("POST", userPath(user.user_id, "/permissions"), { permissions: perms(api.identifier, "read:x") });
    expect(direct.status).toBe(201);

    const listed = (await (await t.call("GET", userPath(user.user_id, "/permissions"))).json()) as PermissionBody[];
    const base = { resource_server_identifier: api.identifier, resource_server_name: api.name };
    const role = (r: RoleBody) => ({ source_id: r.id, source_name: r.name, source_type: "ROLE" });
    expect(listed).toEqual([
      { ...base, permission_name: "admin:x", description: "Can admin:x", sources: [role(admin)] },
      { ...base, permission_name: "read:x", description: "Can read:x", sources: [{ source_id: "", source_name: "", source_type: "DIRECT" }, role(editor)] },
      { ...base, permission_name: "write:x", description: "Can write:x", sources: [role(admin), role(editor)] },
    ]);
    expect(await (await t.call("GET", userPath(user.user_id, "/permissions?per_page=1&page=2&include_totals=true"))).json()).toMatchObject({
      permissions: [{ permission_name: "write:x" }],
      start: 2,
      total: 3,
    });

    expect((await t.call("DELETE", userPath(user.user_id, "/permissions"), { permissions: perms(api.identifier, "read:x", "admin:x") })).status).toBe(204);
    const after = (await (await t.call("GET", userPath(user.user_id, "/permissions"))).json()) as PermissionBody[];
    // read:x stays through Editor; admin:x was never direct, so Admin still grants it.
    expect(after.map((p) => [p.permission_name, p.sources?.map((s) => s.source_type)])).toEqual([
      ["admin:x", ["ROLE"]],
      ["read:x", ["ROLE"]],
      ["write:x", ["ROLE", "ROLE"]],
    ]);
    await expectError(await t.call("POST", userPath(user.user_id, "/permissions"), { permissions: perms(api.identifier, "nope:x") }), 400, "invalid_body");
    await expectError(await t.call("POST", userPath(user.user_id, "/permissions"), { permissions: perms("urn:none", "read:x") }), 404, "inexistent_resource_server");
  });

  it("an unknown user is 404 inexistent_user on every route", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    const role = await createRole(tenant);
    const api = await createRbacApi(tenant, ["read:x"]);
    const path = (rest: string) => userPath("auth0|nobody", rest);
    const answers = [
      await t.call("GET", path("/roles")),
      await t.call("POST", path("/roles"), { roles: [role.id] }),
      await t.call("DELETE", path("/roles"), { roles: [role.id] }),
      await t.call("GET", path("/permissions")),
      await t.call("POST", path("/permissions"), { permissions: perms(api.identifier, "read:x") }),
      await t.call("DELETE", path("/permissions"), { permissions: perms(api.identifier, "read:x") }),
    ];
    for (const res of answers) await expectError(res, 404, "inexistent_user", /user does not exist/);
  });

  it("a deleted user's assignments go with it", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    const api = await createRbacApi(tenant, ["read:x"]);
    const role = await createRole(tenant);
    const user = await createUser(tenant);
    await t.call("POST", userPath(user.user_id, "/roles"), { roles: [role.id] });
    await t.call("POST", userPath(user.user_id, "/permissions"), { permissions: perms(api.identifier, "read:x") });
    const rows = (table: string) =>
      runInDurableObject(env.TENANT.getByName(tenant), (_o, state) => state.storage.sql.exec(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`, user.user_id).one().n);
    expect(await rows("user_roles")).toBe(1);
    await runInDurableObject(env.TENANT.getByName(tenant), (_o, state) => {
      state.storage.sql.exec("DELETE FROM users WHERE user_id = ?", user.user_id);
    });
    expect(await rows("user_roles")).toBe(0);
    expect(await rows("user_permissions")).toBe(0);
    expect(await (await t.call("GET", `/roles/${role.id}/users`)).json()).toEqual([]);
  });

  it("records audit events for assignments with the caller's context", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    const api = await createRbacApi(tenant, ["read:x"]);
    const role = await createRole(tenant);
    const user = await createUser(tenant);
    await t.call("POST", `/roles/${role.id}/permissions`, { permissions: perms(api.identifier, "read:x") });
    await t.call("DELETE", `/roles/${role.id}/permissions`, { permissions: perms(api.identifier, "read:x") });
    await t.call("POST", `/roles/${role.id}/users`, { users: [user.user_id] });
    await t.call("DELETE", userPath(user.user_id, "/roles"), { roles: [role.id] });
    await t.call("POST", userPath(user.user_id, "/roles"), { roles: [role.id] });
    await t.call("POST", userPath(user.user_id, "/permissions"), { permissions: perms(api.identifier, "read:x") });
    await t.call("DELETE", userPath(user.user_id, "/permissions"), { permissions: perms(api.identifier, "read:x") });
    await relay(tenant);
    const logs = await logsOf(tenant);
    const find = (type: string) => logs.find((l) => l.details.event_type === type && l.type === "sapi")?.details;
    const read = perms(api.identifier, "read:x");
    expect(find("role_permissions.created")).toMatchObject({ target: { type: "role_permissions", id: role.id, after: { permissions: read } }, response: { status_code: 201 } });
    expect(find("role_permissions.deleted")).toMatchObject({ target: { id: role.id, before: { permissions: read } }, response: { status_code: 204 } });
    expect(find("role_members.created")).toMatchObject({ target: { id: role.id, after: { users: [user.user_id] } }, response: { status_code: 200 } });
    expect(find("user_roles.created")).toMatchObject({ target: { id: user.user_id, after: { roles: [role.id] } }, response: { status_code: 204 } });
    expect(find("user_roles.deleted")).toMatchObject({ target: { id: user.user_id, before: { roles: [role.id] } } });
    expect(find("user_permissions.created")).toMatchObject({ target: { id: user.user_id, after: { permissions: read } } });
    expect(find("user_permissions.deleted")).toMatchObject({ target: { id: user.user_id }, actor: { type: "client" } });
  });
});

describe("resource servers and permissions", () => {
  it("token_dialect defaults to access_token, accepts access_token_authz, and refuses anything else with 400", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    const plain = await createRbacApi(tenant, ["read:x"]);
    expect(await (await t.call("GET", `/resource-servers/${plain.id}`)).json()).toMatchObject({ token_dialect: "access_token", enforce_policies: false });
    const authz = await createRbacApi(tenant, ["read:x"], { enforce_policies: true, token_dialect: "access_token_authz" });
    expect(await (await t.call("GET", `/resource-servers/${authz.id}`)).json()).toMatchObject({ token_dialect: "access_token_authz", enforce_policies: true });
    const patched = await t.call("PATCH", `/resource-servers/${plain.id}`, { token_dialect: "access_token_authz", enforce_policies: true });
    expect(await patched.json()).toMatchObject({ token_dialect: "access_token_authz", enforce_policies: true });
    await expectError(await t.call("PATCH", `/resource-servers/${plain.id}`, { token_dialect: "rfc9068_jwt" }), 400, "invalid_body", /token_dialect/);
    await expectError(await t.call("POST", "/resource-servers", { identifier: "https://bad.example.com/", token_dialect: 1 }), 400, "invalid_body");
  });

  it("removing a scope from an API removes that permission from roles and users; deleting the API removes all of its permissions", async () => {
    const tenant = await createTenant();
    const t = on(tenant);
    const api = await createRbacApi(tenant, ["read:x", "write:x"]);
    const other = await createRbacApi(tenant, ["read:y"]);
    const role = await createRole(tenant);
    const user = await createUser(tenant);
    await t.call("POST", `/roles/${role.id}/permissions`, { permissions: [...perms(api.identifier, "read:x", "write:x"), ...perms(other.identifier, "read:y")] });
    await t.call("POST", userPath(user.user_id, "/permissions"), { permissions: perms(api.identifier, "read:x", "write:x") });
    const names = async (path: string) => ((await (await t.call("GET", path)).json()) as PermissionBody[]).map((p) => p.permission_name).sort();

    expect((await t.call("PATCH", `/resource-servers/${api.id}`, { scopes: [{ value: "read:x" }] })).status).toBe(200);
    expect(await names(`/roles/${role.id}/permissions`)).toEqual(["read:x", "read:y"]);
    expect(await names(userPath(user.user_id, "/permissions"))).toEqual(["read:x"]);

    expect((await t.call("DELETE", `/resource-servers/${api.id}`)).status).toBe(204);
    expect(await names(`/roles/${role.id}/permissions`)).toEqual(["read:y"]);
    expect(await names(userPath(user.user_id, "/permissions"))).toEqual([]);
    // A new API with the same identifier and scopes starts with no holders.
    const res = await t.call("POST", "/resource-servers", { identifier: api.identifier, scopes: [{ value: "read:x" }, { value: "write:x" }] });
    expect(res.status).toBe(201);
    expect(await names(`/roles/${role.id}/permissions`)).toEqual(["read:y"]);
  });
});
