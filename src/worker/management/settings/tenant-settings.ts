/**
 * GET and PATCH /api/v2/tenants/settings (the reference platform's tenant settings route). What takes effect:
 * `default_audience` (/authorize and client_credentials without an audience), `default_directory` (the
 * login pages' database connection), `session_lifetime` / `idle_session_lifetime` (SSO sessions and the
 * refresh-token fallback windows), and Gatehouse's `default_signing_alg` (src/shared/schemas/tenant-settings.ts).
 * The rest (friendly_name, picture_url, support_email ...) is stored and shown as the reference platform does.
 */
import { DEFAULT_SIGNING_ALG, SANDBOX_VERSIONS, TENANT_SETTINGS_DEFAULTS, updateTenantSettingsBody } from "../../../shared/schemas/tenant-settings";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { tenantConfig } from "../../tenant/config-cache";
import { tenantObject } from "../../tenant/stubs";
import { defineRoute } from "../define";
import { ensureSigningKey } from "../oauth/keys";
import { targetTenant } from "../tenant-scoped";

/**
 * The settings as shown: the reference platform's defaults for what was never set (session lifetimes,
 * sandbox version, locales, flags), what is stored, and the effective default signing algorithm.
 */
const present = (settings: Record<string, unknown>) => ({
  ...TENANT_SETTINGS_DEFAULTS,
  sandbox_versions_available: SANDBOX_VERSIONS,
  ...settings,
  default_signing_alg: settings.default_signing_alg ?? DEFAULT_SIGNING_ALG,
});

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
    summary: "The tenant's settings, with the reference platform's defaults for what was never set (Gatehouse: default_signing_alg, RS256 unless set)",
    status: 200,
    async handler(c) {
      return c.json(present(await targetTenant(c).tenantSettings().get()));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/tenants/settings",
    scope: "update:tenant_settings",
    summary: "Update the tenant settings (friendly_name, support_email, session_lifetime, idle_session_lifetime, default_audience, default_directory, flags, enabled_locales, error_page ...; Gatehouse: default_signing_alg); null removes a value",
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
