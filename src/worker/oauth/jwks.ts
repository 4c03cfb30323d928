import type { AppContext } from "../context";
import { tenantCacheHeaders } from "../routing/resolve-tenant";
import { ensureCertificates } from "../tenant/certificates";
import { tenantJwksDocument } from "../tenant/key-ring";
import { tenantConfigSource } from "../tenant/stubs";

/**
 * GET /.well-known/jwks.json: the tenant's published signing keys at this moment (SPEC §5.7), cacheable
 * for a day or until the next activation, end of grace or expiry, whichever comes first.
 */
export async function jwksEndpoint(c: AppContext): Promise<Response> {
  // c.get, not c.var (which rebuilds an object per access); no tenant stub unless the snapshot is stale.
  const tenant = c.get("tenant");
  const settings = c.get("settings");
  await ensureCertificates(c.env, settings, tenant.id);
  const { body, maxAgeS } = await tenantJwksDocument(tenant.id, tenantConfigSource(c.env, tenant.id), settings);
  return c.body(body, 200, {
    "Content-Type": "application/json",
    ...tenantCacheHeaders(tenant, `max-age=${maxAgeS}, stale-while-revalidate=${Math.min(maxAgeS, 86400)}`),
  });
}
