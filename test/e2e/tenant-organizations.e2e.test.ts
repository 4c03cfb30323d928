import { randomBytes } from "node:crypto";
import { ManagementClient } from "auth0";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { MANAGEMENT_AUDIENCE, sdkOptions } from "./helpers/auth0";

/**
 * Tenant organizations end to end (issue 15 points 3 and 6), against a running `wrangler dev`: the `auth0` SDK
 * on the control plane creates a tenant (its organization appears on the control plane), a role holding
 * read:tenants, a control-plane user, and makes the user a member of the tenant's organization with that role;
 * the user logs in through the real login pages (plain HTTP: cookie, CSRF field, form post) with
 * `organization` and the management audience, and lists /api/v2/tenants seeing only that tenant. A child
 * tenant's token is refused on another tenant with the SPEC's message.
 */

const random = () => randomBytes(4).toString("hex");
const CALLBACK = "https://app.example.com/callback";

describe("tenant organizations through the auth0 SDK and the login pages", () => {
  let server: RunningServer;
  let management: ManagementClient;
  const tenantA = `e2e-a-${random()}`;
  const tenantB = `e2e-b-${random()}`;

  beforeAll(async () => {
    server = await startServer({ shareable: true });
    management = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
  }, 60_000);

  /** A management call with a bearer token (routes the SDK has no typed call for, and the user's token). */
  const api = async (method: string, path: string, body: unknown, token: string) => {
    return fetch(`${server.baseUrl}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  };

  it("a control-plane member of a tenant's organization logs in and lists only that tenant", async () => {
    // The SDK creates the tenants (POST /api/v2/tenants is a passthrough: the SDK has no typed tenant creation).
    const cpToken = await clientToken(server.clientId, server.clientSecret);
    for (const id of [tenantA, tenantB]) expect((await api("POST", "/tenants", { id, name: id }, cpToken)).status).toBe(201);
    const org = await management.organizations.getByName(tenantA);
    expect(org.metadata).toMatchObject({ tenant_id: tenantA });
    const orgId = org.id as string;

    const role = await management.roles.create({ name: `tenant-reader-${random()}` });
    await management.roles.permissions.add(role.id as string, { permissions: [{ resource_server_identifier: MANAGEMENT_AUDIENCE, permission_name: "read:tenants" }] });
    const connections = await management.connections.list({ name: "Username-Password-Authentication" });
    const connectionId = connections.data[0]?.id as string;
    await management.organizations.enabledConnections.add(orgId, { connection_id: connectionId, assign_membership_on_login: false });
    const email = `operator-${random()}@example.com`;
    const password = `Pw-${random()}-${random()}!`;
    const user = await management.users.create({ connection: "Username-Password-Authentication", email, password, email_verified: true });
    await management.organizations.members.create(orgId, { members: [user.user_id as string] });
    await management.organizations.members.roles.assign(orgId, user.user_id as string, { roles: [role.id as string] });
    const app = await management.clients.create({ name: "Operator console", app_type: "regular_web", callbacks: [CALLBACK], organization_usage: "allow" });

    const token = await loginForToken(server, app.client_id as string, app.client_secret as string, email, password, {
      organization: orgId,
      audience: MANAGEMENT_AUDIENCE,
      scope: "openid read:tenants read:clients",
    });
    const list = await api("GET", "/tenants", undefined, token);
    expect(list.status).toBe(200);
    expect(((await list.json()) as { id: string }[]).map((t) => t.id)).toEqual([tenantA]);
    expect((await api("GET", `/tenants/${tenantB}`, undefined, token)).status).toBe(403);
    expect((await api("GET", "/clients", undefined, token)).status).toBe(403);
    // The management app takes no token carrying org_id.
    const viaApp = await fetch(`${server.baseUrl}/management/tenants`, { headers: { authorization: `Bearer ${token}` } });
    expect(viaApp.status).toBe(403);
    const mainTenant = await fetch(`${server.baseUrl}/management/tenants?per_page=100`, { headers: { authorization: `Bearer ${cpToken}` } });
    const page = (await mainTenant.json()) as { tenants: { id: string }[]; page: number; per_page: number };
    expect(page).toMatchObject({ page: 1, per_page: 100 });
    expect(page.tenants.map((t) => t.id)).toEqual(expect.arrayContaining([tenantA, tenantB]));
  });

  it("a child tenant's token is refused on another tenant with the SPEC's message", async () => {
    const cpToken = await clientToken(server.clientId, server.clientSecret);
    // The child's own M2M client, granted read:tenants on its management API.
    const created = await fetch(`${server.baseUrl}/api/v2/clients`, {
      method: "POST",
      headers: { authorization: `Bearer ${cpToken}`, "tenant-id": tenantA, "content-type": "application/json" },
      body: JSON.stringify({ name: "child m2m", app_type: "non_interactive", grant_types: ["client_credentials"] }),
    });
    const client = (await created.json()) as { client_id: string; client_secret: string };
    const granted = await fetch(`${server.baseUrl}/api/v2/client-grants`, {
      method: "POST",
      headers: { authorization: `Bearer ${cpToken}`, "tenant-id": tenantA, "content-type": "application/json" },
      body: JSON.stringify({ client_id: client.client_id, audience: MANAGEMENT_AUDIENCE, scope: ["read:tenants", "create:tenants"] }),
    });
    expect(granted.status).toBe(201);
    const childToken = await clientToken(client.client_id, client.client_secret, tenantA);
    const other = await api("GET", `/tenants/${tenantB}`, undefined, childToken);
    expect(other.status).toBe(403);
    expect(((await other.json()) as { message: string }).message).toBe("Cross-tenant management requires a control-plane token");
    expect((await api("POST", "/tenants", { id: `e2e-c-${random()}` }, childToken)).status).toBe(403);
  });

  /** client_credentials for the management API, on the control plane or a tenant's `tenant_id` query. */
  async function clientToken(clientId: string, secret: string, tenantId?: string): Promise<string> {
    const res = await fetch(`${server.baseUrl}/oauth/token${tenantId ? `?tenant_id=${tenantId}` : ""}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "client_credentials", client_id: clientId, client_secret: secret, audience: MANAGEMENT_AUDIENCE }),
    });
    const body = (await res.json()) as { access_token: string };
    expect(res.status, JSON.stringify(body)).toBe(200);
    return body.access_token;
  }
});

/** The universal-login round trip over plain HTTP: /authorize, the login page (cookie + CSRF), the form, the code. */
async function loginForToken(
  server: RunningServer,
  clientId: string,
  clientSecret: string,
  email: string,
  password: string,
  params: Record<string, string>,
): Promise<string> {
  const authorize = new URL(`${server.baseUrl}/authorize`);
  for (const [k, v] of Object.entries({ client_id: clientId, redirect_uri: CALLBACK, response_type: "code", state: "st", nonce: "n", ...params })) authorize.searchParams.set(k, v);
  const start = await fetch(authorize, { redirect: "manual" });
  expect(start.status).toBe(302);
  const pageUrl = new URL(start.headers.get("location") as string, server.baseUrl);
  const page = await fetch(pageUrl, { redirect: "manual" });
  const html = await page.text();
  const cookie = page.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
  const posted = await fetch(pageUrl, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ _csrf: csrf, email, password }),
  });
  const location = new URL(posted.headers.get("location") ?? "", server.baseUrl);
  const code = location.searchParams.get("code");
  expect(code, `${posted.status} ${location.href}`).toBeTruthy();
  const res = await fetch(`${server.baseUrl}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code: code as string, redirect_uri: CALLBACK, client_id: clientId, client_secret: clientSecret }),
  });
  const body = (await res.json()) as { access_token: string; scope: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  expect(body.scope.split(" ")).toContain("read:tenants");
  return body.access_token;
}
