import type { Settings } from "../settings";
import type { TenantDirectory } from "../routing/resolve-tenant";

/** The registry singleton. */
export const platform = (env: Env) => env.PLATFORM.getByName("platform");

/** One tenant's object. */
export const tenantObject = (env: Env, tenantId: string) => env.TENANT.getByName(tenantId);

/** One user's object inside a tenant. */
export const userObject = (env: Env, tenantId: string, userId: string) =>
  env.USER.getByName(`${tenantId}/${userId}`);

/** The registry as the tenant resolver sees it. */
export function directory(env: Env, _settings: Settings): TenantDirectory {
  const stub = platform(env);
  return {
    hasTenant: (id) => stub.hasTenant(id),
    resolveCustomDomain: (host) => stub.resolveCustomDomain(host),
    countTenants: () => stub.countTenants(),
  };
}
