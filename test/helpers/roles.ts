import { expect } from "vitest";
import { mgmt, uniqueId } from "./api";
import { seedUser } from "./flows";

/** Management calls on a tenant with the control plane's token (all scopes). */
export const on = (tenantId: string) => ({
  call: (method: string, path: string, body?: unknown) => mgmt(method, path, { headers: { "tenant-id": tenantId }, ...(body !== undefined ? { body } : {}) }),
});

export interface RoleBody {
  id: string;
  name: string;
  description?: string;
}

/** POST /roles on a tenant; fails the test unless 201. */
export async function createRole(tenantId: string, name = uniqueId("role"), description?: string): Promise<RoleBody> {
  const res = await on(tenantId).call("POST", "/roles", { name, ...(description !== undefined ? { description } : {}) });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as RoleBody;
}

/** POST /resource-servers on a tenant with the given scopes and settings. */
export async function createRbacApi(
  tenantId: string,
  scopes: string[],
  settings: Record<string, unknown> = {},
): Promise<{ id: string; identifier: string; name: string }> {
  const identifier = `https://${uniqueId("api")}.example.com/`;
  const res = await on(tenantId).call("POST", "/resource-servers", {
    identifier,
    name: `API ${identifier}`,
    scopes: scopes.map((value) => ({ value, description: `Can ${value}` })),
    ...settings,
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: string; identifier: string; name: string };
}

/** A database user of the tenant. */
export const createUser = (tenantId: string, prefix = "u") => seedUser(tenantId, `${prefix}-${crypto.randomUUID().slice(0, 8)}@example.com`);

/** `{resource_server_identifier, permission_name}` pairs for one API. */
export const perms = (identifier: string, ...names: string[]) =>
  names.map((permission_name) => ({ resource_server_identifier: identifier, permission_name }));

/** The path of a user sub-resource (user ids hold a `|`). */
export const userPath = (userId: string, rest: string) => `/users/${encodeURIComponent(userId)}${rest}`;

/** A management error body as the reference platform's SDK reads it. */
export async function expectError(res: Response, status: number, errorCode?: string, message?: RegExp): Promise<void> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = JSON.parse(text) as { statusCode: number; error: string; message: string; errorCode: string };
  expect(body.statusCode).toBe(status);
  expect(typeof body.error).toBe("string");
  expect(typeof body.message).toBe("string");
  if (errorCode) expect(body.errorCode).toBe(errorCode);
  if (message) expect(body.message).toMatch(message);
}
