import type { AppContext } from "../context";
import { tenantCacheHeaders } from "../routing/resolve-tenant";
import { memoized } from "../tenant/config-cache";
import { publicJwks } from "../tenant/signing";
import { tenantObject } from "../tenant/stubs";

/** GET /.well-known/jwks.json: the tenant's public signing keys (SPEC §5.7), long max-age. */
export async function jwksEndpoint(c: AppContext): Promise<Response> {
  const tenant = c.var.tenant;
  const body = await memoized(tenant.id, tenantObject(c.env, tenant.id), c.var.settings, "jwks", (config) =>
    JSON.stringify(publicJwks(config)),
  );
  return c.body(body, 200, {
    "Content-Type": "application/json",
    ...tenantCacheHeaders(tenant, "max-age=86400, stale-while-revalidate=86400"),
  });
}
