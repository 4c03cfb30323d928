import { expect } from "vitest";
import { createTenant, mgmt } from "./api";

/** A user as the management API answers it. */
export interface UserBody {
  user_id: string;
  email?: string;
  email_verified: boolean;
  identities: Array<{ connection: string; provider: string; user_id: string; isSocial: boolean; profileData?: Record<string, unknown> }>;
  app_metadata: Record<string, unknown>;
  user_metadata: Record<string, unknown>;
  created_at: string;
  [field: string]: unknown;
}

export const DB = "Username-Password-Authentication";

/** Management options acting on a child tenant with the control-plane token. */
export const on = (tenantId: string) => ({ headers: { "tenant-id": tenantId } });

/** A management call on a tenant (control-plane token unless `token` is given). */
export const api = (tenantId: string, method: string, path: string, body?: unknown, token?: string) =>
  mgmt(method, path, { ...on(tenantId), ...(body !== undefined ? { body } : {}), ...(token !== undefined ? { token } : {}) });

/** POST /connections on a tenant; answers the connection's id. */
export async function createConnection(tenantId: string, name: string, strategy: string, options: Record<string, unknown> = {}): Promise<string> {
  const res = await api(tenantId, "POST", "/connections", { name, strategy, options });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** A fresh tenant with a passwordless email connection named `email` (users created there skip bcrypt). */
export async function usersTenant(): Promise<string> {
  const tenantId = await createTenant();
  await createConnection(tenantId, "email", "email");
  return tenantId;
}

/** POST /users, expecting 201. */
export async function createUser(tenantId: string, body: Record<string, unknown>): Promise<UserBody> {
  const res = await api(tenantId, "POST", "/users", body);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as UserBody;
}

/** A passwordless user in the `email` connection (no bcrypt: fast to create many). */
export const emailUser = (tenantId: string, email: string, extra: Record<string, unknown> = {}) =>
  createUser(tenantId, { connection: "email", email, ...extra });

/** The management error body of a failed call, with its status. */
export async function failure(res: Response): Promise<{ status: number; message: string; errorCode: string }> {
  const body = (await res.json()) as { message: string; errorCode: string };
  return { status: res.status, message: body.message, errorCode: body.errorCode };
}

export const path = (userId: string, rest = "") => `/users/${encodeURIComponent(userId)}${rest}`;
