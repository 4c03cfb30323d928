import { exportJWK, generateKeyPair } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { MANAGEMENT_AUDIENCE } from "../../src/shared/scopes";
import { createTenant, mgmt, uniqueId } from "../helpers/api";
import { operatorLogin, operatorToken, roleId } from "../helpers/operators";

/**
 * Review after issue 30: a seeded "Gatehouse Editor" (every read, create and update scope) made itself Admin by
 * adding the Admin role to its own user; it could also grant an application every management scope, or rotate
 * a stronger application's secret and act as it. An operator now never gains authority it does not hold
 * (src/worker/management/operator-authority.ts).
 */

let editor: { token: string; userId: string };
let admin: string;

beforeAll(async () => {
  editor = await operatorLogin("Gatehouse Editor");
  admin = await operatorToken("Gatehouse Admin");
}, 60_000);

const as = (token: string, tenant?: string) => ({ token, ...(tenant ? { headers: { "tenant-id": tenant } } : {}) });
const rolesOf = async (userId: string) => ((await (await mgmt("GET", `/users/${encodeURIComponent(userId)}/roles`)).json()) as { name: string }[]).map((r) => r.name);

async function m2m(tenant: string, scope: string[] | null): Promise<string> {
  const made = await mgmt("POST", "/clients", { headers: { "tenant-id": tenant }, body: { name: uniqueId("m2m"), app_type: "non_interactive", grant_types: ["client_credentials"] } });
  expect(made.status).toBe(201);
  const clientId = ((await made.json()) as { client_id: string }).client_id;
  if (scope) {
    const grant = await mgmt("POST", "/client-grants", { headers: { "tenant-id": tenant }, body: { client_id: clientId, audience: MANAGEMENT_AUDIENCE, scope } });
    expect(grant.status).toBe(201);
  }
  return clientId;
}

describe("an operator gains no authority it does not hold", () => {
  it("an Editor cannot make itself (or anyone) Admin, nor add scopes to a control-plane role", async () => {
    const adminRole = await roleId("Gatehouse Admin");
    const self = await mgmt("POST", `/users/${encodeURIComponent(editor.userId)}/roles`, { ...as(editor.token), body: { roles: [adminRole] } });
    expect(self.status).toBe(403);
    expect(await self.json()).toMatchObject({ statusCode: 403, errorCode: "insufficient_scope" });
    const viaRole = await mgmt("POST", `/roles/${adminRole}/users`, { ...as(editor.token), body: { users: [editor.userId] } });
    expect(viaRole.status).toBe(403);
    const widened = await mgmt("POST", `/roles/${await roleId("Gatehouse Editor")}/permissions`, {
      ...as(editor.token),
      body: { permissions: [{ resource_server_identifier: MANAGEMENT_AUDIENCE, permission_name: "delete:tenants" }] },
    });
    expect(widened.status).toBe(403);
    expect(await rolesOf(editor.userId)).toEqual(["Gatehouse Editor"]);
    // The Admin still manages operators.
    const other = await operatorLogin("Gatehouse Viewer");
    expect((await mgmt("POST", `/users/${encodeURIComponent(other.userId)}/roles`, { ...as(admin), body: { roles: [await roleId("Gatehouse Editor")] } })).status).toBe(204);
  });

  it("the control plane's own applications and settings change only by an Admin; an Editor still creates and changes tenants", async () => {
    const app = await mgmt("POST", "/clients", { ...as(editor.token), body: { name: uniqueId("cp-app"), app_type: "non_interactive" } });
    expect(app.status).toBe(403);
    expect((await mgmt("PATCH", "/tenants/settings", { ...as(editor.token), body: { friendly_name: "taken" } })).status).toBe(403);
    expect((await mgmt("POST", "/clients", { ...as(admin), body: { name: uniqueId("cp-app"), app_type: "non_interactive" } })).status).toBe(201);
    const id = uniqueId("ed").toLowerCase().replaceAll("_", "-");
    const tenant = await mgmt("POST", "/tenants", { ...as(editor.token), body: { id, name: id } });
    expect(tenant.status, await tenant.clone().text()).toBe(201);
    expect((await mgmt("PATCH", `/tenants/${id}`, { ...as(editor.token), body: { name: "Renamed" } })).status).toBe(200);
    // On a tenant it operates, the Editor's writes work as before.
    expect((await mgmt("POST", "/clients", { ...as(editor.token, id), body: { name: uniqueId("app"), app_type: "spa" } })).status).toBe(201);
  });

  it("on any tenant, an Editor grants an application only management scopes it holds itself", async () => {
    const tenant = await createTenant();
    const client = await m2m(tenant, null);
    const beyond = await mgmt("POST", "/client-grants", { ...as(editor.token, tenant), body: { client_id: client, audience: MANAGEMENT_AUDIENCE, scope: ["read:users", "delete:users"] } });
    expect(beyond.status).toBe(403);
    expect(await beyond.json()).toMatchObject({ errorCode: "insufficient_scope", message: expect.stringContaining("delete:users") });
    expect(await (await mgmt("GET", `/client-grants?client_id=${client}`, { headers: { "tenant-id": tenant } })).json()).toEqual([]);
    const within = await mgmt("POST", "/client-grants", { ...as(editor.token, tenant), body: { client_id: client, audience: MANAGEMENT_AUDIENCE, scope: ["read:users"] } });
    expect(within.status).toBe(201);
    const grant = ((await within.json()) as { id: string }).id;
    const widened = await mgmt("PATCH", `/client-grants/${grant}`, { ...as(editor.token, tenant), body: { scope: ["read:users", "delete:users"] } });
    expect(widened.status).toBe(403);
    const read = (await (await mgmt("GET", `/client-grants/${grant}`, { headers: { "tenant-id": tenant } })).json()) as { scope: string[] };
    expect(read.scope).toEqual(["read:users"]);
    expect((await mgmt("PATCH", `/client-grants/${grant}`, { ...as(admin, tenant), body: { scope: ["read:users", "delete:users"] } })).status).toBe(200);
  });

  it("an Editor cannot take over a stronger application's credentials: rotate its secret, set its keys or add a credential", async () => {
    const tenant = await createTenant();
    const strong = await m2m(tenant, ["read:users", "delete:users"]);
    const rotate = await mgmt("POST", `/clients/${strong}/rotate-secret`, as(editor.token, tenant));
    expect(rotate.status).toBe(403);
    expect(JSON.stringify(await rotate.json())).not.toContain("client_secret\"");
    const key = { ...(await exportJWK((await generateKeyPair("RS256")).publicKey)), kid: "k1", alg: "RS256", use: "sig" };
    for (const body of [{ jwks: { keys: [key] } }, { token_endpoint_auth_method: "client_secret_basic" }]) {
      expect((await mgmt("PATCH", `/clients/${strong}`, { ...as(editor.token, tenant), body })).status, JSON.stringify(body)).toBe(403);
    }
    expect((await mgmt("POST", `/clients/${strong}/credentials`, { ...as(editor.token, tenant), body: { credential_type: "public_key", pem: "-----BEGIN PUBLIC KEY-----\nAA==\n-----END PUBLIC KEY-----" } })).status).toBe(403);
    // Its other settings, and the credentials of an application no stronger than the Editor, stay the Editor's to change.
    expect((await mgmt("PATCH", `/clients/${strong}`, { ...as(editor.token, tenant), body: { description: "changed" } })).status).toBe(200);
    const weak = await m2m(tenant, ["read:users"]);
    expect((await mgmt("POST", `/clients/${weak}/rotate-secret`, as(editor.token, tenant))).status).toBe(200);
    expect((await mgmt("POST", `/clients/${strong}/rotate-secret`, as(admin, tenant))).status).toBe(200);
  });
});
