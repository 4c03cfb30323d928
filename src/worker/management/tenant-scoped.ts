import type { AppContext } from "../context";
import { invalidateTenantConfig } from "../tenant/config-cache";
import { tenantObject } from "../tenant/stubs";

/** The object of the tenant a management request targets (resolved by management auth, SPEC §5.4-5.5). */
export const targetTenant = (c: AppContext) => tenantObject(c.env, c.var.tenant.id);

/**
 * After a configuration write: this isolate's snapshot goes at once, so the next /oauth/token sees the
 * change; other isolates revalidate by the version the write bumped.
 */
export const configChanged = (c: AppContext) => invalidateTenantConfig(c.var.tenant.id);
