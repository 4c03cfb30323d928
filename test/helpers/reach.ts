import { expect } from "vitest";
import { CP, createTenant, mgmt } from "./api";
import { mintWithTenantKey } from "./mint";

/** A client_credentials-shaped management token issued by a tenant itself, with the given scopes. */
export const tenantToken = (tenantId: string, scope: string) =>
  mintWithTenantKey(tenantId, { iss: `http://${tenantId}.localhost:8787/`, aud: CP.audience, scope });

/**
 * Who can reach a management route: no token is 401, a token lacking the scope 403, another tenant's
 * token (with the scope) 403, and the tenant's own token with the scope gets `expected`.
 */
export async function expectReachability(
  method: string,
  path: (tenantId: string) => Promise<string> | string,
  scope: string,
  expected: number,
  body?: (tenantId: string) => unknown,
): Promise<void> {
  const own = await createTenant();
  const other = await createTenant();
  const target = await path(own);
  const payload = body?.(own);
  const send = (token: string, headers: Record<string, string> = {}) =>
    mgmt(method, target, { token, headers, ...(payload !== undefined ? { body: payload } : {}) });
  expect((await send("", { "tenant-id": own })).status, "no token").toBe(401);
  expect((await send(await tenantToken(own, "read:branding"))).status, "scope missing").toBe(403);
  expect((await send(await tenantToken(other, scope), { "tenant-id": own })).status, "another tenant").toBe(403);
  const res = await send(await tenantToken(own, scope));
  expect(res.status, await res.clone().text()).toBe(expected);
}
