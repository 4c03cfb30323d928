import { isCurrentUserScope, ORGANIZATION_TENANT_SCOPES } from "../../../shared/scopes";
import type { ResourceServerRecord } from "../../../shared/schemas/resource-servers";

/** OpenID Connect scopes: released by every user-facing grant (OIDC Core §5.4, §11). */
export const OIDC_SCOPES = ["openid", "profile", "email", "address", "phone", "offline_access"];

/**
 * The scopes a user-facing grant (authorization code, implicit and hybrid responses, token exchange, and
 * later refresh and passwordless) may put in a token for `api`. Denied by default (issue 6):
 * - the system API (the management API) releases only the `*:current_user*` family, whatever it defines:
 *   every other management scope reaches a token only through a client grant (client_credentials);
 * - an API with `enforce_policies` (RBAC) releases only requested scopes that are the user's permissions;
 * - any other API releases the requested scopes it defines (the reference platform's default).
 *
 * One narrow exception (SPEC "Control-plane inheritance", issue 15 point 3): a login on the control plane
 * through one of its organizations (`controlPlaneOrganization`) may also carry the tenants scopes
 * (ORGANIZATION_TENANT_SCOPES) that the user holds as permissions on the management API, through its roles
 * in that organization; management auth then confines such a token to the tenant of that organization.
 *
 * And one more (issue 30): a login on the control plane to the admin console's own application, through no
 * organization (`consoleOperator`), may carry the management scopes the user holds as permissions on the
 * management API there; management auth reads those permissions again at every request.
 */
export function grantableUserScopes(
  requested: readonly string[],
  api: ResourceServerRecord | undefined,
  permissions: readonly string[] = [],
  context: { controlPlaneOrganization?: boolean; consoleOperator?: boolean } = {},
): string[] {
  const defined = new Set(api?.scopes.map((s) => s.value) ?? []);
  const allowed = (scope: string): boolean => {
    if (OIDC_SCOPES.includes(scope)) return true;
    if (!api) return false;
    if (api.is_system) {
      if (isCurrentUserScope(scope)) return true;
      if (context.consoleOperator === true) return defined.has(scope) && permissions.includes(scope);
      return context.controlPlaneOrganization === true && ORGANIZATION_TENANT_SCOPES.includes(scope) && permissions.includes(scope);
    }
    if (!defined.has(scope)) return false;
    return api.enforce_policies ? permissions.includes(scope) : true;
  };
  return [...new Set(requested)].filter(allowed);
}
