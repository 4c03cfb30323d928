import type { MiddlewareHandler } from "hono";
import { problem } from "../../shared/errors";
import { MANAGEMENT_AUDIENCE, MANAGEMENT_SCOPES } from "../../shared/scopes";
import type { AppContext, AppEnv } from "../context";
import { targetTenant } from "./tenant-scoped";

/**
 * An operator (a control-plane user's console token, issue 30) never gains authority it does not hold. The
 * security review after issue 30 found a Gatehouse Editor making itself Admin: adding the Admin role to its own
 * user, granting an application every management scope, or rotating a stronger application's secret.
 *
 * 1. The control plane's own resources (its users, roles, applications, grants, connections, actions,
 *    settings) are the operators' access itself: an operator changes them only holding every management scope
 *    (the seeded Admin). The tenants routes stay open to their scopes (an Editor creates and changes tenants).
 * 2. On any tenant, an operator gives an application's management API grant at most the scopes it holds, and
 *    changes the credentials of (rotates the secret of, adds keys to) an application only if it holds every
 *    management scope that application's grants give.
 *
 * Client tokens are not held to this: a client with create:client_grants is an administrator on the reference
 * platform too. User tokens never hold these scopes (the current-user rules).
 */

const isOperator = (c: AppContext) => c.var.auth.kind === "operator";
const missing = (c: AppContext, scopes: readonly string[]) => scopes.filter((s) => !c.var.auth.scopes.has(s));

/** Paths of the control plane an operator reaches with its scopes alone: the tenants it operates. */
const TENANT_OPERATIONS = /^\/api\/v2\/(?:tenants(?!\/settings(?:\/|$))(?:\/|$)|operations(?:\/|$))/;

/** Point 1: writes to the control plane's own resources need every management scope (after the route's own scope check, define.ts). */
export const operatorAuthority: MiddlewareHandler<AppEnv> = async (c, next) => {
  const method = c.req.method;
  if (isOperator(c) && method !== "GET" && method !== "HEAD" && method !== "OPTIONS" && c.var.tenant.id === c.var.settings.controlPlaneTenantId) {
    if (!TENANT_OPERATIONS.test(c.req.path)) {
      const lacking = missing(c, MANAGEMENT_SCOPES);
      if (lacking.length) throw problem("operator_control_plane_admin_only", { scope: lacking.slice(0, 3).join(", ") });
    }
  }
  await next();
};

/** Point 2: a management API grant an operator writes holds no scope the operator lacks. */
export function refuseGrantBeyondOperator(c: AppContext, audience: string | undefined, scopes: readonly string[] | undefined): void {
  if (!isOperator(c) || audience !== MANAGEMENT_AUDIENCE || !scopes) return;
  const lacking = missing(c, scopes);
  if (lacking.length) throw problem("operator_grant_beyond_own", { scope: lacking.slice(0, 3).join(", ") });
}

/** Point 2 for PATCH /client-grants/{id}: the grant's audience is read first (the body names only scopes). */
export async function refuseGrantChangeBeyondOperator(c: AppContext, grantId: string, scopes: readonly string[] | undefined): Promise<void> {
  if (!isOperator(c) || !scopes) return;
  const grant = await targetTenant(c).clientGrants().get(grantId);
  if (grant) refuseGrantBeyondOperator(c, grant.audience, scopes);
}

/** Point 2: an application's credentials change only by an operator holding all its management grants give. */
export async function refuseCredentialsOfStrongerClient(c: AppContext, clientId: string): Promise<void> {
  if (!isOperator(c)) return;
  const page = await targetTenant(c).clientGrants().list({ offset: 0, limit: 100 }, { client_id: clientId, audience: MANAGEMENT_AUDIENCE });
  const lacking = missing(c, page.items.flatMap((grant) => grant.scope));
  if (lacking.length) throw problem("operator_credentials_of_stronger_client", { scope: lacking.slice(0, 3).join(", ") });
}
