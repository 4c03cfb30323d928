import { Hono } from "hono";
import type { AppEnv } from "../context";
import { managementCors } from "../middleware/cors";
import { errorSink } from "../middleware/errors";
import { managementAuth, type ManagementAuthOptions } from "../middleware/management-auth";
import { actionRoutes } from "./actions";
import { attackProtectionRoutes } from "./attack-protection";
import { authenticationMethodRoutes } from "./authentication-methods";
import { noStore } from "../middleware/no-store";
import { requestContext } from "../middleware/request-context";
import { brandingRoutes } from "./branding";
import { clientGrantRoutes } from "./client-grants";
import { clientRoutes } from "./clients";
import { connectionRoutes } from "./connections";
import { customDomainRoutes } from "./custom-domains";
import { type ManagementRoute, mountRoutes, openApiDocument } from "./define";
import { failedEventRoutes } from "./failed-events";
import { guardianRoutes } from "./guardian";
import { hookRoutes } from "./hooks";
import { emailProviderRoutes } from "./email-provider";
import { jobRoutes } from "./jobs";
import { logRoutes } from "./logs";
import { organizationsRoutes } from "./organizations";
import { logStreamRoutes } from "./log-streams";
import { refreshTokenRoutes } from "./refresh-tokens";
import { signingKeyRoutes } from "./keys";
import { resourceServerRoutes } from "./resource-servers";
import { roleAssignmentRoutes } from "./role-assignments";
import { roleRoutes } from "./roles";
import { sessionRoutes } from "./sessions";
import { tenantSettingsRoutes } from "./tenant-settings";
import { operationRoutes } from "./operations";
import { copyCredentialRoutes } from "./copy-credentials";
import { proxyRouteRoutes } from "./proxy-routes";
import { tenantRoutes } from "./tenants";
import { ticketRoutes } from "./tickets";
import { mountMethodNotAllowed, mountUnoffered } from "./unoffered";
import { userBlockRoutes } from "./user-blocks";
import { userRoleRoutes } from "./user-roles";
import { userRoutes } from "./users";

/** Every management route, one list per resource. */
export const managementRoutes: readonly ManagementRoute[] = [
  ...tenantSettingsRoutes,
  ...tenantRoutes,
  ...customDomainRoutes,
  ...operationRoutes,
  ...copyCredentialRoutes,
  ...proxyRouteRoutes,
  ...clientRoutes,
  ...connectionRoutes,
  ...resourceServerRoutes,
  ...clientGrantRoutes,
  ...brandingRoutes,
  ...logRoutes,
  ...hookRoutes,
  ...emailProviderRoutes,
  ...failedEventRoutes,
  ...userRoutes,
  ...jobRoutes,
  ...refreshTokenRoutes,
  ...signingKeyRoutes,
  ...sessionRoutes,
  ...attackProtectionRoutes,
  ...userBlockRoutes,
  ...roleRoutes,
  ...roleAssignmentRoutes,
  ...userRoleRoutes,
  ...organizationsRoutes,
  ...actionRoutes,
  ...logStreamRoutes,
  ...authenticationMethodRoutes,
  ...guardianRoutes,
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
  // Resource types this service does not offer answer 403 feature_not_enabled; real routes win over them.
  mountUnoffered(router, managementRoutes);
  mountRoutes(router, managementRoutes);
  mountMethodNotAllowed(router, managementRoutes);
  return router;
}
