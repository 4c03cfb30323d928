import { Hono } from "hono";
import type { AppEnv } from "../context";
import { managementAuth, type ManagementAuthOptions } from "../middleware/management-auth";
import { brandingRoutes } from "./branding";
import { clientGrantRoutes } from "./client-grants";
import { clientRoutes } from "./clients";
import { connectionRoutes } from "./connections";
import { type ManagementRoute, mountRoutes, openApiDocument } from "./define";
import { signingKeyRoutes } from "./keys";
import { resourceServerRoutes } from "./resource-servers";
import { tenantRoutes } from "./tenants";
import { userRoutes } from "./users";

/** Every management route, one list per resource. */
export const managementRoutes: readonly ManagementRoute[] = [
  ...tenantRoutes,
  ...clientRoutes,
  ...connectionRoutes,
  ...resourceServerRoutes,
  ...clientGrantRoutes,
  ...brandingRoutes,
  ...userRoutes,
  ...signingKeyRoutes,
];

let spec: string | undefined;

/** GET /api/v2/spec, built once per isolate from the same definitions that validate requests. */
export function managementSpec(): string {
  spec ??= JSON.stringify(openApiDocument("Gatehouse Management API", "/api/v2", managementRoutes));
  return spec;
}

/** The /api/v2 router: authentication first, then each route behind its scope. */
export function managementRouter(options: ManagementAuthOptions): Hono<AppEnv> {
  const router = new Hono<AppEnv>();
  router.get("/spec", (c) => c.body(managementSpec(), 200, { "Content-Type": "application/json" }));
  router.use("*", managementAuth(options));
  mountRoutes(router, managementRoutes);
  return router;
}
