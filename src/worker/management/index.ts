import { Hono } from "hono";
import type { AppEnv } from "../context";
import { managementCors } from "../middleware/cors";
import { errorSink } from "../middleware/errors";
import { managementAuth, type ManagementAuthOptions } from "../middleware/management-auth";
import { actionRoutes } from "./actions/actions";
import { attackProtectionRoutes } from "./settings/attack-protection";
import { settingsDocumentRoutes } from "./settings/documents";
import { authenticationMethodRoutes } from "./users/authentication-methods";
import { noStore } from "../middleware/no-store";
import { requestContext } from "../middleware/request-context";
import { brandingRoutes } from "./settings/branding";
import { brandingThemeRoutes } from "./settings/branding-themes";
import { clientGrantRoutes } from "./oauth/client-grants";
import { grantRoutes } from "./oauth/grants";
import { organizationClientGrantRoutes } from "./oauth/organization-client-grants";
import { clientRoutes } from "./oauth/clients";
import { clientCredentialRoutes } from "./oauth/client-credentials";
import { connectionRoutes } from "./oauth/connections";
import { connectionClientRoutes } from "./oauth/connection-clients";
import { connectionUserRoutes } from "./users/connection-users";
import { customDomainRoutes } from "./tenants/custom-domains";
import { type ManagementRoute, mountRoutes, openApiDocument } from "./define";
import { failedEventRoutes } from "./outbox/failed-events";
import { guardianRoutes } from "./mfa/guardian";
import { userMfaRoutes } from "./mfa/user-mfa";
import { hookRoutes } from "./outbox/hooks";
import { emailProviderRoutes } from "./settings/email-provider";
import { emailTemplateRoutes } from "./settings/email-templates";
import { promptRoutes } from "./settings/prompts";
import { jobRoutes } from "./jobs/jobs";
import { logRoutes } from "./outbox/logs";
import { statsRoutes } from "./outbox/stats";
import { organizationsRoutes } from "./organizations/organizations";
import { logStreamRoutes } from "./outbox/log-streams";
import { refreshTokenRoutes } from "./login/refresh-tokens";
import { signingKeyRoutes } from "./oauth/keys";
import { resourceServerRoutes } from "./oauth/resource-servers";
import { roleAssignmentRoutes } from "./roles/role-assignments";
import { roleRoutes } from "./roles/roles";
import { sessionRoutes } from "./login/sessions";
import { tenantSettingsRoutes } from "./settings/tenant-settings";
import { operationRoutes } from "./tenants/operations";
import { copyCredentialRoutes } from "./tenants/copy-credentials";
import { proxyRouteRoutes } from "./tenants/proxy-routes";
import { tenantRoutes } from "./tenants/tenants";
import { ticketRoutes } from "./users/tickets";
import { managementRateLimit } from "./rate-limit";
import { mountMethodNotAllowed, mountUnoffered } from "./unoffered";
import { userBlockRoutes } from "./users/user-blocks";
import { userRoleRoutes } from "./roles/user-roles";
import { effectiveAccessRoutes } from "./roles/effective-access";
import { userRoutes } from "./users/users";

/** Every management route, one list per resource. */
export const managementRoutes: readonly ManagementRoute[] = [
  ...tenantSettingsRoutes,
  ...tenantRoutes,
  ...customDomainRoutes,
  ...operationRoutes,
  ...copyCredentialRoutes,
  ...proxyRouteRoutes,
  ...clientRoutes,
  ...clientCredentialRoutes,
  ...connectionRoutes,
  ...connectionClientRoutes,
  ...connectionUserRoutes,
  ...resourceServerRoutes,
  ...clientGrantRoutes,
  ...grantRoutes,
  ...organizationClientGrantRoutes,
  ...brandingRoutes,
  ...brandingThemeRoutes,
  ...logRoutes,
  ...statsRoutes,
  ...hookRoutes,
  ...emailProviderRoutes,
  ...emailTemplateRoutes,
  ...promptRoutes,
  ...failedEventRoutes,
  ...userRoutes,
  ...jobRoutes,
  ...refreshTokenRoutes,
  ...signingKeyRoutes,
  ...sessionRoutes,
  ...attackProtectionRoutes,
  ...settingsDocumentRoutes,
  ...userBlockRoutes,
  ...roleRoutes,
  ...roleAssignmentRoutes,
  ...userRoleRoutes,
  ...effectiveAccessRoutes,
  ...organizationsRoutes,
  ...actionRoutes,
  ...logStreamRoutes,
  ...authenticationMethodRoutes,
  ...guardianRoutes,
  ...userMfaRoutes,
  ...ticketRoutes,
];

let spec: string | undefined;

/** GET /api/v2/spec, built once per isolate from the same definitions that validate requests. */
export function managementSpec(): string {
  spec ??= JSON.stringify(openApiDocument("Gatehouse Management API", "/api/v2", managementRoutes));
  return spec;
}

/**
 * The management surface (/api/v2): management error bodies, no-store, CORS from the tenant's web origins,
 * then authentication (which also resolves the target tenant, SPEC §5.4) and each route behind its scope.
 */
export function managementRouter(options: ManagementAuthOptions): Hono<AppEnv> {
  const router = new Hono<AppEnv>();
  router.onError(errorSink("management"));
  router.use("*", requestContext, noStore, managementCors);
  router.get("/spec", (c) => c.body(managementSpec(), 200, { "Content-Type": "application/json" }));
  router.use("*", managementAuth(options));
  router.use("*", managementRateLimit);
  // Resource types this service does not offer answer 403 feature_not_enabled; real routes win over them.
  mountUnoffered(router, managementRoutes);
  mountRoutes(router, managementRoutes);
  mountMethodNotAllowed(router, managementRoutes);
  return router;
}
