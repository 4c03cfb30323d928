import { Hono } from "hono";
import { timingSafeEqualText } from "../../shared/crypto/compare";
import type { AppEnv } from "../context";
import { ensureControlPlane } from "../tenant/bootstrap";
import { platform, tenantObject } from "../tenant/stubs";
import { settingsOf } from "../settings";

/**
 * The deployment endpoints of a tenant's own copy (issue 16 point 4): the provisioning workflow calls them
 * through the namespace to apply migrations, seed and verify. They exist only in a copy (DEPLOY_TOKEN set
 * by the upload-secrets step) and answer 404 elsewhere; the token is the bearer, compared in constant time.
 *
 * In a copy the tenant is the deployment's only tenant: CONTROL_PLANE_TENANT_ID is the tenant id and ISSUER
 * is the tenant's host, so the copy answers exactly like the shared service does on that subdomain.
 */
export function copyDeployRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // Liveness for the namespace supervisor: answers before any bootstrap, reveals nothing.
  app.get("/ready", (c) => c.text("ok"));
  app.use("*", async (c, next) => {
    const expected = (c.env as unknown as Record<string, string | undefined>).DEPLOY_TOKEN;
    if (!expected) return c.json({ error: "not_found" }, 404);
    const presented = /^Bearer (.+)$/.exec(c.req.header("authorization") ?? "")?.[1] ?? "";
    if (!(await timingSafeEqualText(presented, expected))) return c.json({ error: "invalid_token" }, 401);
    c.header("Cache-Control", "no-store");
    await next();
  });
  const describe = async (env: Env) => {
    const settings = settingsOf(env);
    const e = env as unknown as Record<string, string | undefined>;
    return {
      tenant_id: settings.controlPlaneTenantId,
      worker_version: e.WORKER_VERSION ?? null,
      bundle_configuration: e.BUNDLE_CONFIGURATION ?? null,
      schema: {
        tenant: await tenantObject(env, settings.controlPlaneTenantId).schemaVersion(),
        platform: await platform(env).schemaVersion(),
      },
      issuer: settings.issuer,
    };
  };
  // apply-migrations: touching each object runs its pending migrations (append-only list, one transaction each).
  app.post("/migrate", async (c) => c.json(await describe(c.env)));
  // seed-defaults: the idempotent tenant seed (signing key, management API, control-plane client, admin).
  app.post("/seed", async (c) => {
    const settings = settingsOf(c.env);
    await ensureControlPlane(c.env, settings);
    const config: { signingKeys: unknown[] } = await tenantObject(c.env, settings.controlPlaneTenantId).getConfig(settings.controlPlaneTenantId);
    return c.json({ seeded: true, signing_keys: config.signingKeys.length, ...(await describe(c.env)) });
  });
  app.get("/health", async (c) => c.json(await describe(c.env)));
  return app;
}
