/**
 * GET and PATCH /api/v2/tenants/settings (the reference platform's tenant settings route), limited to what
 * Gatehouse reads: `default_audience` (client_credentials without an audience) and `default_signing_alg`
 * (a Gatehouse setting, see src/shared/schemas/tenant-settings.ts).
 */
import { DEFAULT_SIGNING_ALG, updateTenantSettingsBody } from "../../shared/schemas/tenant-settings";
import type { AppContext } from "../context";
import { auditContext } from "../http/audit";
import { tenantConfig } from "../tenant/config-cache";
import { tenantObject } from "../tenant/stubs";
import { defineRoute } from "./define";
import { ensureSigningKey } from "./keys";
import { targetTenant } from "./tenant-scoped";

/** The settings as shown: what is stored, with the effective default signing algorithm. */
const present = (settings: Record<string, unknown>) => ({ ...settings, default_signing_alg: settings.default_signing_alg ?? DEFAULT_SIGNING_ALG });

/** The tenant's default access-token algorithm (for an API created without `signing_alg`). */
export async function tenantDefaultSigningAlg(c: AppContext): Promise<string> {
  const config = await tenantConfig(c.var.tenant.id, tenantObject(c.env, c.var.tenant.id), c.var.settings);
  return String(config.settings.default_signing_alg ?? DEFAULT_SIGNING_ALG);
}

/** Registered before the /tenants/{id} routes, which would otherwise take `settings` for a tenant id. */
export const tenantSettingsRoutes = [
  defineRoute({
    method: "get",
    path: "/tenants/settings",
    scope: "read:tenant_settings",
    summary: "The tenant's settings (default_audience; Gatehouse: default_signing_alg, RS256 unless set)",
    status: 200,
    async handler(c) {
      return c.json(present(await targetTenant(c).tenantSettings().get()));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/tenants/settings",
    scope: "update:tenant_settings",
    summary: "Update default_audience or default_signing_alg (RS256, PS256, ES256, EdDSA); null removes a value",
    body: updateTenantSettingsBody,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { body }) {
      // The key comes first, so no token request finds the default algorithm without a key of its kind.
      if (body.default_signing_alg) await ensureSigningKey(c, body.default_signing_alg);
      return c.json(present(await targetTenant(c).tenantSettings(auditContext(c)).update(body)));
    },
  }),
];
