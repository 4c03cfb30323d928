import { isCurrentUserScope } from "../../../shared/scopes";
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
 */
export function grantableUserScopes(
  requested: readonly string[],
  api: ResourceServerRecord | undefined,
  permissions: readonly string[] = [],
): string[] {
  const defined = new Set(api?.scopes.map((s) => s.value) ?? []);
  const allowed = (scope: string): boolean => {
    if (OIDC_SCOPES.includes(scope)) return true;
    if (!api) return false;
    if (api.is_system) return isCurrentUserScope(scope);
    if (!defined.has(scope)) return false;
    return api.enforce_policies ? permissions.includes(scope) : true;
  };
  return [...new Set(requested)].filter(allowed);
}
