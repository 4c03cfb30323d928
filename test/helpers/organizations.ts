import { expect } from "vitest";
import { createTenant, mgmt, uniqueId } from "./api";
import { seedUser } from "./flows";

/** An organization as the management API returns it. */
export interface OrgBody {
  id: string;
  name: string;
  display_name?: string;
  branding?: { logo_url?: string; colors?: { primary: string; page_background: string } };
  metadata: Record<string, string>;
  [field: string]: unknown;
}

/** Management calls on one tenant with the control-plane token (the `tenant-id` header). */
export function onTenant(tenantId: string) {
  const call = (method: string, path: string, body?: unknown) => mgmt(method, path, { headers: { "tenant-id": tenantId }, body });
  return {
    call,
    async json<T = Record<string, unknown>>(method: string, path: string, body?: unknown, status = method === "POST" ? 201 : 200): Promise<T> {
      const res = await call(method, path, body);
      const text = await res.text();
      expect(res.status, `${method} ${path}: ${text}`).toBe(status);
      return (text ? JSON.parse(text) : null) as T;
    },
  };
}

/** A fresh child tenant and its management helpers. */
export async function freshTenant() {
  const tenantId = await createTenant();
  return { tenantId, api: onTenant(tenantId) };
}

/** Creates an organization with a unique name. */
export async function createOrg(tenantId: string, body: Record<string, unknown> = {}): Promise<OrgBody> {
  return onTenant(tenantId).json<OrgBody>("POST", "/organizations", { name: uniqueId("org").toLowerCase(), ...body });
}

/** The id of the tenant's database connection (Username-Password-Authentication). */
export async function databaseConnectionId(tenantId: string): Promise<string> {
  const list = await onTenant(tenantId).json<Array<{ id: string; name: string }>>("GET", "/connections?name=Username-Password-Authentication");
  const connection = list.find((c) => c.name === "Username-Password-Authentication");
  if (!connection) throw new Error("no database connection");
  return connection.id;
}

/** An organization whose database connection is enabled, with `members` users added as members. */
export async function orgWithMembers(tenantId: string, members: number, settings: Record<string, unknown> = {}) {
  const org = await createOrg(tenantId);
  const connectionId = await databaseConnectionId(tenantId);
  await onTenant(tenantId).json("POST", `/organizations/${org.id}/enabled_connections`, { connection_id: connectionId, ...settings });
  const users = [];
  for (let i = 0; i < members; i++) users.push(await seedUser(tenantId, `${uniqueId("member")}@example.com`));
  if (users.length) await onTenant(tenantId).json("POST", `/organizations/${org.id}/members`, { members: users.map((u) => u.user_id) }, 204);
  return { org, connectionId, users };
}
