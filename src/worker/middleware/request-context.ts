import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context";
import { resolveTenant } from "../routing/resolve-tenant";
import { settingsOf, withRouting } from "../settings";
import { ensureControlPlane } from "../tenant/bootstrap";
import { directory } from "../tenant/stubs";

/** Every request: settings, and the control plane seeded (once per isolate; a missing key fails here). */
export const requestContext: MiddlewareHandler<AppEnv> = async (c, next) => {
  const settings = withRouting(settingsOf(c.env), c.get("routing"));
  c.set("settings", settings);
  await ensureControlPlane(c.env, settings);
  await next();
};

/** Auth API and login routes: resolve the tenant from the request (SPEC §5.5). */
export const tenantFromRequest: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.set("tenant", await resolveTenant(c.req.raw, c.get("settings"), directory(c.env, c.get("settings"))));
  await next();
};
