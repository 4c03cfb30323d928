import type { AppContext } from "../context";
import { tenantObject } from "../tenant/stubs";

/** The object of the tenant a management request targets (resolved by management auth, SPEC §5.4-5.5). */
export const targetTenant = (c: AppContext) => tenantObject(c.env, c.var.tenant.id);

