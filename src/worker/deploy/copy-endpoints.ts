import { Hono } from "hono";
import { z } from "zod";
import { timingSafeEqualText } from "../../shared/crypto/compare";
import { unwrap } from "../../shared/errors";
import type { CustomDomainRecord } from "../../shared/types";
import { forgetHost } from "../routing/resolve-tenant";
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
const customDomainsBody = z.object({
  domains: z
    .array(
      z.looseObject({
        custom_domain_id: z.string().min(1).max(64),
        domain: z.string().min(1).max(253),
        type: z.string().min(1).max(64),
        status: z.string().min(1).max(64),
      }),
    )
    .max(100),
});

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
  // The tenant's custom domains, as the control plane holds them (its registry is the record; the dispatcher
  // routes them here): mirrored so that this copy resolves them and names them as its issuer (SPEC §5.6).
  app.put("/custom-domains", async (c) => {
    const parsed = customDomainsBody.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) return c.json({ error: "invalid_body", message: parsed.error.issues[0]?.message ?? "invalid body" }, 400);
    const tenantId = settingsOf(c.env).controlPlaneTenantId;
    const registry = platform(c.env).domains();
    const wanted = new Set(parsed.data.domains.map((d) => d.custom_domain_id));
    for (const existing of await registry.list(tenantId)) {
      if (wanted.has(existing.custom_domain_id)) continue;
      await registry.forget(existing.custom_domain_id);
      forgetHost(existing.domain);
    }
    for (const domain of parsed.data.domains) {
      unwrap(await registry.mirror({ ...(domain as unknown as CustomDomainRecord), tenant_id: tenantId }));
      forgetHost(domain.domain);
    }
    return c.json({ domains: parsed.data.domains.map((d) => d.domain) });
  });
  return app;
}
