import { problem, unwrap } from "../../shared/errors";
import { offsetPage, parseListQuery } from "../../shared/pagination/list-query";
import { confusableWith, createTenantBody, updateTenantBody } from "../../shared/schemas/tenants";
import type { Tenant } from "../../shared/types";
import { certificateProvider } from "./custom-domains";
import type { AppContext } from "../context";
import { forgetHost } from "../routing/resolve-tenant";
import { seedChildTenant } from "../tenant/bootstrap";
import { runAfter, runBefore } from "../tenant/lifecycle";
import { ensureTenantOrganization, removeTenantOrganization } from "../tenant/tenant-organization";
import { invalidateTenantConfig } from "../tenant/config-cache";
import { forgetTenant, platform, tenantObject } from "../tenant/stubs";
import { auditContext } from "../http/audit";
import { deploymentConfigured, onDeprovision, onProvision, resolveRelease } from "../deploy/lifecycle";
import { scriptNameFor } from "../../shared/script-name";
import { defineRoute } from "./define";
import { LIST_QUERY, listResponse } from "./list-response";

/** Tenants other than the caller's own are visible only to control-plane tokens (SPEC §5.4). */
function assertCanManage(c: AppContext, id: string): void {
  if (id !== c.var.auth.tenantId && !c.var.auth.isControlPlane) throw problem("cross_tenant_forbidden");
}

async function loadTenant(c: AppContext, id: string): Promise<Tenant> {
  const tenant = await platform(c.env).tenants().get(id);
  if (!tenant) throw problem("tenant_not_found");
  return tenant;
}

async function releaseHostnames(c: AppContext, domains: { domain: string; ref: string | null }[]): Promise<void> {
  const provider = certificateProvider(c.var.settings);
  for (const { domain, ref } of domains) {
    forgetHost(domain);
    if (ref) await provider.remove(ref).catch(() => undefined);
  }
}

const actorOf = (c: AppContext) => ({ tenantId: c.var.auth.tenantId, clientId: c.var.auth.clientId });

const forgetTenantHost = (c: AppContext, id: string) => {
  forgetHost(`${id}.${c.var.settings.apexHost}`);
  forgetTenant(id);
};

export const tenantRoutes = [
  defineRoute({
    method: "post",
    path: "/tenants",
    scope: "create:tenants",
    summary: "Create a tenant (control-plane tokens only); runs the idempotent tenant seed",
    body: createTenantBody,
    status: 201,
    async handler(c, { body }) {
      if (!c.var.auth.isControlPlane) throw problem("control_plane_only");
      if (confusableWith(body.id, c.var.settings.controlPlaneTenantId)) {
        throw problem("tenant_id_reserved");
      }
      if (c.var.settings.reservedSubdomains.includes(body.id)) throw problem("tenant_id_reserved_subdomain");
      const registry = platform(c.env);
      const hooks = c.var.tenantHooks ?? {};
      if (body.deployment_type === "wfp") {
        // Per-tenant copy (issue 16): the row starts `pending` and the response returns while the
        // provisioning workflow runs; clients poll GET /tenants/{id} or the operation.
        if (!deploymentConfigured(c.env)) {
          throw problem("not_implemented", { detail: 'deployment_type "wfp" needs a dispatch namespace (NAMESPACE_API_URL or CLOUDFLARE_API_TOKEN) and a release store' });
        }
        const configuration = body.bundle_configuration ?? "default";
        const worker_version = await resolveRelease(c.env, configuration, body.worker_version);
        const worker_script_name = scriptNameFor(c.env.SCRIPT_NAME_TEMPLATE, { tenant_id: body.id });
        const wfpInput = { ...body, name: body.name ?? body.id, bundle_configuration: configuration, worker_version, worker_script_name };
        await runBefore(hooks.onTenantCreating, { tenant: wfpInput, actor: actorOf(c) });
        const tenant = unwrap(await registry.tenants(auditContext(c), c.var.auth.tenantId).create(wfpInput));
        await onProvision(c.env, tenant, { audit: auditContext(c), logTenantId: c.var.auth.tenantId, requestedBy: c.var.auth.subject || null });
        await ensureTenantOrganization(c.env, c.var.settings, tenant, auditContext(c));
        forgetTenantHost(c, tenant.id);
        await runAfter(hooks.onTenantCreated, { tenant, actor: actorOf(c) });
        return c.json((await registry.tenants().get(tenant.id)) ?? tenant, 201);
      }
      const input = { ...body, name: body.name ?? body.id };
      await runBefore(hooks.onTenantCreating, { tenant: input, actor: actorOf(c) });
      const tenant = unwrap(await registry.tenants(auditContext(c), c.var.auth.tenantId).create(input));
      try {
        await seedChildTenant(c.env, tenant.id);
        await registry.tenants().markSeeded(tenant.id);
        // Its organization on the control plane (access to the tenant by membership, issue 15 point 3).
        await ensureTenantOrganization(c.env, c.var.settings, tenant, auditContext(c));
      } catch (error) {
        // Nothing lost and nothing half-made: without its keys the tenant must not exist.
        await registry.tenants(auditContext(c), c.var.auth.tenantId).delete(tenant.id);
        await tenantObject(c.env, tenant.id).destroy();
        throw error;
      }
      forgetTenantHost(c, tenant.id);
      await runAfter(hooks.onTenantCreated, { tenant, actor: actorOf(c) });
      return c.json(tenant, 201);
    },
  }),
  defineRoute({
    method: "get",
    path: "/tenants",
    scope: "read:tenants",
    summary: "List tenants (all tenants on the control plane; the caller's own tenant elsewhere)",
    query: LIST_QUERY,
    status: 200,
    async handler(c) {
      const registry = platform(c.env);
      if (!c.var.auth.isControlPlane) {
        const q = parseListQuery(c.req.query(), { checkpoint: true });
        const own = [await loadTenant(c, c.var.auth.tenantId)];
        return c.json(q.mode === "offset" ? offsetPage("tenants", own, q, 1) : { tenants: own });
      }
      return listResponse(c, "tenants", (window) => registry.tenants().list(window), (t) => t.id, (t) => t);
    },
  }),
  defineRoute({
    method: "get",
    path: "/tenants/{id}",
    scope: "read:tenants",
    summary: "Get one tenant",
    status: 200,
    async handler(c, { params }) {
      assertCanManage(c, params.id);
      return c.json(await loadTenant(c, params.id));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/tenants/{id}",
    scope: "update:tenants",
    summary: "Update a tenant's settings",
    body: updateTenantBody,
    status: 200,
    async handler(c, { params, body }) {
      const id = params.id;
      assertCanManage(c, id);
      const hooks = c.var.tenantHooks ?? {};
      const before = await loadTenant(c, id);
      if (before.deployment_type === "wfp" && ("worker_version" in body || "bundle_configuration" in body || "storage_kind" in body)) {
        // A copy's pin moves only through a journaled upgrade that verified the new release (issue 16).
        throw problem("tenant_not_wfp", { tenant_id: id, detail: "no: its release pin moves only through POST /tenants/{id}/operations (kind upgrade)" });
      }
      await runBefore(hooks.onTenantUpdating, { tenant: before, patch: body, actor: actorOf(c) });
      const tenant = unwrap(await platform(c.env).tenants(auditContext(c), c.var.auth.tenantId).update(id, body));
      invalidateTenantConfig(id);
      await runAfter(hooks.onTenantUpdated, { tenant, before, actor: actorOf(c) });
      return c.json(tenant);
    },
  }),
  defineRoute({
    method: "delete",
    path: "/tenants/{id}",
    scope: "delete:tenants",
    summary: "Delete a tenant and all of its data (control-plane tokens only)",
    status: 204,
    async handler(c, { params }) {
      const id = params.id;
      if (!c.var.auth.isControlPlane) throw problem("cross_tenant_forbidden");
      if (id === c.var.settings.controlPlaneTenantId) throw problem("control_plane_undeletable");
      const hooks = c.var.tenantHooks ?? {};
      const doomed = await loadTenant(c, id);
      await runBefore(hooks.onTenantDeleting, { tenant: doomed, actor: actorOf(c) });
      const registry = platform(c.env);
      const domains = await Promise.all(
        (await registry.domains().list(id)).map(async (d) => ({ domain: d.domain, ref: await registry.domains().providerRef(d.custom_domain_id) })),
      );
      // onDeprovision: the tenant's script leaves the namespace before its row does.
      await onDeprovision(c.env, doomed);
      if (!(await platform(c.env).tenants(auditContext(c), c.var.auth.tenantId).delete(id))) throw problem("tenant_not_found");
      // The certificate provider forgets the tenant's hostnames (best effort: the rows are gone already).
      await releaseHostnames(c, domains);
      await tenantObject(c.env, id).destroy();
      await removeTenantOrganization(c.env, c.var.settings, id, auditContext(c));
      invalidateTenantConfig(id);
      forgetTenantHost(c, id);
      await runAfter(hooks.onTenantDeleted, { tenant: doomed, actor: actorOf(c) });
      return c.body(null, 204);
    },
  }),
];
