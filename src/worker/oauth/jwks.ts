import type { AppContext } from "../context";
import { preparedJson } from "../http/prepared";
import { tenantCacheHeaders } from "../routing/resolve-tenant";
import { ensureCertificates } from "../tenant/certificates";
import { tenantConfig } from "../tenant/config-cache";
import { tenantJwksDocument } from "../tenant/key-ring";
import { tenantConfigSource } from "../tenant/stubs";

/**
 * GET /.well-known/jwks.json: the tenant's published signing keys at this moment (SPEC §5.7), cacheable
 * for a day or until the next activation, end of grace or expiry, whichever comes first. Answered from the
 * document's bytes serialized once per snapshot and key window, with a strong ETag (304 to a conditional GET
 * that holds it) and headers built once per cache variant and max-age (issue 31).
 */
export async function jwksEndpoint(c: AppContext): Promise<Response> {
  // c.get, not c.var (which rebuilds an object per access); no tenant stub unless the snapshot is stale.
  const tenant = c.get("tenant");
  const settings = c.get("settings");
  const source = tenantConfigSource(c.env, tenant.id);
  let config = await tenantConfig(tenant.id, source, settings);
  if (config.signingKeys.some((key) => key.cert === null)) {
    await ensureCertificates(c.env, settings, tenant.id);
    config = await tenantConfig(tenant.id, source, settings);
  }
  const { body, maxAgeS } = await tenantJwksDocument(tenant.id, source, settings, config);
  return preparedJson(c.req.raw, body, `${tenant.via}:${maxAgeS}`, () =>
    tenantCacheHeaders(tenant, `max-age=${maxAgeS}, stale-while-revalidate=${Math.min(maxAgeS, 86400)}`),
  );
}
