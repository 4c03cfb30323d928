import { problem } from "../../shared/errors";
import type { UserRecord } from "../../shared/schemas/users";
import type { AppContext } from "../context";
import { tenantObject } from "../tenant/stubs";

/** The object of the tenant a management request targets (resolved by management auth, SPEC §5.4-5.5). */
export const targetTenant = (c: AppContext) => tenantObject(c.env, c.var.tenant.id);


/** The user a route names, or 404 `inexistent_user` (the one check every /users/{id}/... route starts with). */
export async function requireUser(c: AppContext, userId: string): Promise<UserRecord> {
  const user = await targetTenant(c).users().get(userId);
  if (!user) throw problem("inexistent_user");
  return user;
}
