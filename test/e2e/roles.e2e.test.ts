import { ManagementClient, ManagementError } from "auth0";
import { createRemoteJWKSet, jwtVerify } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { sdkOptions } from "./helpers/auth0";
import { passwordLogin } from "./helpers/login";

/**
 * Roles and permissions end to end against `wrangler dev` (issue 9): the `auth0` SDK's ManagementClient does
 * CRUD on roles, gives a role permissions of an RBAC API, assigns the role to a user who signed up through
 * /dbconnections/signup, and reads the user's permissions; a real authorization-code login with
 * `openid-client` then gets an access token whose `permissions` claim, verified with `jose` against the
 * JWKS, is exactly what the management API reported.
 */
describe("roles and permissions through the auth0 SDK", () => {
  let server: RunningServer;
  let admin: ManagementClient;
  let app: { client_id: string; client_secret: string };
  const callback = "https://app.example.com/callback";
  const origin = "https://app.example.com";
  const audience = `https://docs-${Date.now()}.example.com/`;
  const email = `roles-${Date.now()}@example.com`;
  const password = `Pw-${crypto.randomUUID()}`;
  let userId: string;

  beforeAll(async () => {
    server = await startServer({ shareable: true });
    admin = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
    await admin.resourceServers.create({
      identifier: audience,
      name: "Docs API",
      scopes: [
        { value: "read:docs", description: "Read documents" },
        { value: "write:docs", description: "Write documents" },
        { value: "delete:docs", description: "Delete documents" },
      ],
      enforce_policies: true,
      token_dialect: "access_token_authz",
    });
    const created = await admin.clients.create({
      name: "Docs app",
      app_type: "regular_web",
      callbacks: [callback],
      web_origins: [origin],
      grant_types: ["authorization_code"],
      token_endpoint_auth_method: "client_secret_post",
    });
    app = { client_id: String(created.client_id), client_secret: String(created.client_secret) };
    const signup = await fetch(`${server.baseUrl}/dbconnections/signup`, {
      method: "POST",
      headers: { "content-type": "application/json", origin },
      body: JSON.stringify({ client_id: app.client_id, email, password, connection: "Username-Password-Authentication" }),
    });
    expect(signup.status).toBe(200);
    userId = ((await signup.json()) as { id: string }).id;
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
  });

  it("does CRUD on roles with the SDK, including its paginators and its 404 and 409 errors", async () => {
    const role = await admin.roles.create({ name: `Writers ${Date.now()}`, description: "Write access" });
    expect(role.id).toMatch(/^rol_/);
    expect(await admin.roles.get(role.id as string)).toEqual(role);
    const renamed = await admin.roles.update(role.id as string, { name: `${role.name} (renamed)` });
    expect(renamed).toMatchObject({ id: role.id, name: `${role.name} (renamed)`, description: "Write access" });
    const conflict = await admin.roles.create({ name: renamed.name as string }).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ManagementError);
    expect((conflict as ManagementError).statusCode).toBe(409);

    const listed: string[] = [];
    for await (const r of await admin.roles.list({ per_page: 1 })) listed.push(r.id as string);
    expect(listed).toContain(role.id);
    const filtered = await admin.roles.list({ name_filter: "(RENAMED)" });
    expect(filtered.data.map((r) => r.id)).toEqual([role.id]);

    await admin.roles.delete(role.id as string);
    const gone = await admin.roles.get(role.id as string).catch((e: unknown) => e);
    expect((gone as ManagementError).statusCode).toBe(404);
  });

  it("assigns permissions to a role and the role to a user; a real login's access token carries exactly those permissions", async () => {
    const role = await admin.roles.create({ name: `Editors ${Date.now()}` });
    const roleId = role.id as string;
    await admin.roles.permissions.add(roleId, {
      permissions: [
        { resource_server_identifier: audience, permission_name: "write:docs" },
        { resource_server_identifier: audience, permission_name: "read:docs" },
      ],
    });
    const rolePermissions = await admin.roles.permissions.list(roleId);
    expect(rolePermissions.data).toEqual([
      { resource_server_identifier: audience, permission_name: "read:docs", resource_server_name: "Docs API", description: "Read documents" },
      { resource_server_identifier: audience, permission_name: "write:docs", resource_server_name: "Docs API", description: "Write documents" },
    ]);
    const undefinedPermission = await admin.roles.permissions
      .add(roleId, { permissions: [{ resource_server_identifier: audience, permission_name: "launch:missiles" }] })
      .catch((e: unknown) => e);
    expect((undefinedPermission as ManagementError).statusCode).toBe(400);

    await admin.roles.users.assign(roleId, { users: [userId] });
    const members: string[] = [];
    for await (const member of await admin.roles.users.list(roleId, { take: 10 })) members.push(member.user_id as string);
    expect(members).toEqual([userId]);
    expect((await admin.users.roles.list(userId)).data.map((r) => r.id)).toEqual([roleId]);

    const permissions = await admin.users.permissions.list(userId);
    const held = permissions.data.map((p) => p.permission_name).sort();
    expect(held).toEqual(["read:docs", "write:docs"]);
    expect((permissions.data[0] as unknown as { sources: unknown[] }).sources).toEqual([{ source_id: roleId, source_name: role.name, source_type: "ROLE" }]);

    // A real login: /co/authenticate for a login ticket, then openid-client's authorization code flow.
    const config = await oidc.discovery(new URL(`${server.baseUrl}/`), app.client_id, app.client_secret, undefined, { execute: [oidc.allowInsecureRequests] });
    const tokens = await passwordLogin(config, { baseUrl: server.baseUrl, clientId: app.client_id, origin, callback, username: email, password, scope: "openid read:docs write:docs delete:docs", audience });

    const jwks = createRemoteJWKSet(new URL("/.well-known/jwks.json", server.baseUrl));
    const { payload } = await jwtVerify(tokens.access_token, jwks, { issuer: server.issuer, audience });
    expect(payload.sub).toBe(userId);
    expect(payload.permissions).toEqual(held);
    expect(String(payload.scope).split(" ").sort()).toEqual(["openid", "read:docs", "write:docs"]);
  });

  it("routes the service does not offer answer 403 feature_not_enabled through the SDK", async () => {
    const refused = await admin.rules.list().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ManagementError);
    expect((refused as ManagementError).statusCode).toBe(403);
    expect((refused as ManagementError).body).toMatchObject({ errorCode: "feature_not_enabled" });
  });
});
