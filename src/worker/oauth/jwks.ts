import type { AppContext } from "../context";
import { tenantCacheHeaders } from "../routing/resolve-tenant";
import { ensureCertificates } from "../tenant/certificates";
import { tenantJwksDocument } from "../tenant/key-ring";
import { tenantObject } from "../tenant/stubs";

/**
 * GET /.well-known/jwks.json: the tenant's published signing keys at this moment (SPEC §5.7), cacheable
 * for a day or until the next activation, end of grace or expiry, whichever comes first.
 */
export async function jwksEndpoint(c: AppContext): Promise<Response> {
  const tenant = c.var.tenant;
  await ensureCertificates(c.env, c.var.settings, tenant.id);
  const { body, maxAgeS } = await tenantJwksDocument(tenant.id, tenantObject(c.env, tenant.id), c.var.settings);
  return c.body(body, 200, {
    "Content-Type": "application/json",
    ...tenantCacheHeaders(tenant, `max-age=${maxAgeS}, stale-while-revalidate=${Math.min(maxAgeS, 86400)}`),
  });
}
