import { type Context, Hono, type MiddlewareHandler } from "hono";
import { z } from "zod";
import { problem } from "../../../shared/errors";
import { createTenantBody, updateTenantBody } from "../../../shared/schemas/platform/tenants";
import type { AppEnv } from "../../context";
import { readJson } from "../../http/body";
import { managementCors } from "../../middleware/cors";
import { errorSink } from "../../middleware/errors";
import { managementAuth, type ManagementAuthOptions, requireScope } from "../../middleware/management-auth";
import { noStore } from "../../middleware/no-store";
import { requestContext } from "../../middleware/request-context";
import { platform } from "../../tenant/stubs";
import { createTenantAs, deleteTenantAs, loadTenant, updateTenantAs } from "../../tenant/tenant-admin";

/**
 * The multi-tenancy management app (SPEC §4.2, last paragraph; issue 15 point 6), mounted at `/management`
 * as the reference implementation mounts its tenants router (authhero's multi-tenancy plugin,
 * `routes: [{ path: "/management", ... }]`): `/management/tenants[/:id]`. It is the same tenants facade as
 * `/api/v2/tenants` (src/worker/tenant/tenant-admin.ts) in the app's own envelopes: 1-based pages, `{tenant}`,
 * `{success}`. Every route takes only a main-tenant token: a control-plane token without `org_id`.
 */

/** `page` from 1 (default 1), `per_page` 1-100 (default 50); anything else is 400. */
const pageQuery = z.looseObject({
  page: z.coerce.number().int("page must be an integer").min(1, "page must be at least 1").default(1),
  per_page: z.coerce
    .number()
    .int("per_page must be an integer")
    .min(1, "per_page must be between 1 and 100")
    .max(100, "per_page must be between 1 and 100")
    .default(50),
});

/** POST body: the tenant fields of /api/v2/tenants, `name` required (SPEC: `{id, name, friendly_name?, ...}`). */
const createBody = createTenantBody.extend({ name: z.string().trim().min(1).max(255) });

/** Only the main tenant: a control-plane token, never one carrying `org_id` (SPEC §4.2). */
const mainTenantOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  const auth = c.var.auth;
  if (auth.organizationId !== null) throw problem("organization_token_forbidden");
  if (auth.tenantId !== c.var.settings.controlPlaneTenantId) throw problem("cross_tenant_forbidden");
  await next();
};

type AppContext = Context<AppEnv>;

async function listTenants(c: AppContext): Promise<Response> {
  const parsed = pageQuery.safeParse(c.req.query());
  if (!parsed.success) throw problem("invalid_query_string", { detail: parsed.error.issues[0]?.message ?? "Invalid query" });
  const { page, per_page } = parsed.data;
  const { items, total } = await platform(c.env).tenants().list({ offset: (page - 1) * per_page, limit: per_page });
  return c.json({ tenants: items, total: total ?? items.length, page, per_page });
}

export function tenantsApp(options: ManagementAuthOptions): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError(errorSink("management"));
  app.use("*", requestContext, noStore, managementCors);
  app.use("/tenants", managementAuth(options), mainTenantOnly);
  app.use("/tenants/*", managementAuth(options), mainTenantOnly);
  app.get("/tenants", requireScope("read:tenants"), listTenants);
  app.post("/tenants", requireScope("create:tenants"), async (c) => c.json({ tenant: await createTenantAs(c, await readJson(c, createBody)) }, 201));
  app.get("/tenants/:id", requireScope("read:tenants"), async (c) => c.json({ tenant: await loadTenant(c, c.req.param("id")) }));
  app.patch("/tenants/:id", requireScope("update:tenants"), async (c) =>
    c.json({ tenant: await updateTenantAs(c, c.req.param("id"), await readJson(c, updateTenantBody)) }),
  );
  app.delete("/tenants/:id", requireScope("delete:tenants"), async (c) => {
    // The journaled deletion: `success` once every step ran; otherwise the sweep finishes it (202).
    const { done, operation } = await deleteTenantAs(c, c.req.param("id"));
    return done ? c.json({ success: true }) : c.json({ success: false, operation }, 202);
  });
  return app;
}
