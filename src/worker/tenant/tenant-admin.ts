import { problem, unwrap } from "../../shared/errors";
import type { createTenantBody, updateTenantBody } from "../../shared/schemas/platform/tenants";
import { confusableWith } from "../../shared/schemas/platform/tenants";
import type { Tenant, TenantOperation } from "../../shared/types";
import type { z } from "zod";
import type { AppContext } from "../context";
import { deploymentConfigured, onProvision, resolveRelease } from "../deploy/lifecycle";
import { auditContext } from "../http/audit";
import { forgetHost } from "../routing/resolve-tenant";
import { scriptNameFor } from "../../shared/script-name";
import { seedChildTenant } from "./bootstrap";
import { invalidateTenantConfig } from "./config-cache";
import { runAfter, runBefore } from "./lifecycle";
import { forgetTenant, platform, tenantObject } from "./stubs";
import { openTenantDeletion, runTenantDeletion } from "./tenant-deletion";
import { ensureTenantOrganization, tenantOfOrganization } from "./tenant-organization";

/**
 * The tenants facade of the worker: create, read, update and delete a tenant with its seed, organization,
 * lifecycle hooks and access rules, shared by `/api/v2/tenants` and the multi-tenancy management app
 * (`/management/tenants`), which differ only in their envelopes.
 */

type CreateBody = z.infer<typeof createTenantBody>;
type UpdateBody = z.infer<typeof updateTenantBody>;

const actorOf = (c: AppContext) => ({ tenantId: c.var.auth.tenantId, clientId: c.var.auth.clientId });

const forgetTenantHost = (c: AppContext, id: string) => {
  forgetHost(`${id}.${c.var.settings.apexHost}`);
  if (c.var.settings.baseDomain) forgetHost(`${id}.${c.var.settings.baseDomain}`);
  forgetTenant(id);
};

export async function loadTenant(c: AppContext, id: string): Promise<Tenant> {
  const tenant = await platform(c.env).tenants().get(id);
  if (!tenant) throw problem("tenant_not_found");
  return tenant;
}

/**
 * Who may reach tenant `id` (SPEC §5.4, issue 15 point 3): a control-plane client token any tenant; a
 * control-plane user's organization-bound token only the tenant of its organization (unless
 * `requireOrganizationMatch` is off); any other token only its own tenant.
 */
export async function assertCanManage(c: AppContext, id: string): Promise<void> {
  const auth = c.var.auth;
  if (auth.organizationBound) {
    if (!c.var.settings.requireOrganizationMatch) return;
    const own = await tenantOfOrganization(c.env, c.var.settings, auth.organizationId as string);
    if (own !== id) throw problem("tenant_organization_mismatch", { tenant_id: id });
    return;
  }
  if (id !== auth.tenantId && !auth.isControlPlane) throw problem("cross_tenant_forbidden");
}

/**
 * The tenants a caller may list, when it may not list them all: its own tenant, or the tenant of its
 * organization (organization-bound token). Null: every tenant (a control-plane client token, or an
 * organization-bound token with `requireOrganizationMatch` off).
 */
export async function visibleTenants(c: AppContext): Promise<Tenant[] | null> {
  const auth = c.var.auth;
  if (auth.isControlPlane) return null;
  if (auth.organizationBound) {
    if (!c.var.settings.requireOrganizationMatch) return null;
    const own = await tenantOfOrganization(c.env, c.var.settings, auth.organizationId as string);
    const tenant = own ? await platform(c.env).tenants().get(own) : null;
    return tenant ? [tenant] : [];
  }
  return [await loadTenant(c, auth.tenantId)];
}

/** Creates a tenant (control-plane client tokens only): seed, organization, hooks. */
export async function createTenantAs(c: AppContext, body: CreateBody): Promise<Tenant> {
  if (!c.var.auth.isControlPlane) throw problem("control_plane_only");
  if (confusableWith(body.id, c.var.settings.controlPlaneTenantId)) throw problem("tenant_id_reserved");
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
    return (await registry.tenants().get(tenant.id)) ?? tenant;
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
  return tenant;
}

/** What an organization member's token may change on its tenant: its names and sender, never its deployment. */
const MEMBER_PATCHABLE = new Set(["name", "friendly_name", "sender_name", "sender_email"]);

/** Updates a tenant's registry fields, with the update hooks. */
export async function updateTenantAs(c: AppContext, id: string, body: UpdateBody): Promise<Tenant> {
  await assertCanManage(c, id);
  if (c.var.auth.organizationBound) {
    const refused = Object.keys(body).filter((k) => !MEMBER_PATCHABLE.has(k));
    if (refused.length) throw problem("tenant_field_forbidden", { fields: refused.join(", ") });
  }
  const hooks = c.var.tenantHooks ?? {};
  const before = await loadTenant(c, id);
  const pinned = ["worker_version", "bundle_configuration", "storage_kind"].filter((field) => field in body);
  if (before.deployment_type === "wfp" && pinned.length) {
    // A copy's pin moves only through a journaled upgrade that verified the new release (issue 16).
    throw problem("tenant_pin_by_operation", { tenant_id: id, fields: pinned.join(", ") });
  }
  await runBefore(hooks.onTenantUpdating, { tenant: before, patch: body, actor: actorOf(c) });
  const tenant = unwrap(await platform(c.env).tenants(auditContext(c), c.var.auth.tenantId).update(id, body));
  invalidateTenantConfig(id);
  await runAfter(hooks.onTenantUpdated, { tenant, before, actor: actorOf(c) });
  return tenant;
}

/**
 * Deletes a tenant and all of its data through the journaled `delete` operation (control-plane client
 * tokens only). `done`: every step ran; otherwise the operation stays open and the stale-operation sweep
 * finishes it (the tenant no longer resolves either way once its first step ran).
 */
export async function deleteTenantAs(c: AppContext, id: string): Promise<{ done: boolean; operation: TenantOperation | null }> {
  if (!c.var.auth.isControlPlane) throw problem("cross_tenant_forbidden");
  if (id === c.var.settings.controlPlaneTenantId) throw problem("control_plane_undeletable");
  const hooks = c.var.tenantHooks ?? {};
  const doomed = await loadTenant(c, id);
  await runBefore(hooks.onTenantDeleting, { tenant: doomed, actor: actorOf(c) });
  const caller = { audit: auditContext(c), logTenantId: c.var.auth.tenantId, requestedBy: c.var.auth.subject || null };
  const opened = await openTenantDeletion(c.env, doomed, caller);
  let operation: TenantOperation | null = opened;
  try {
    operation = await runTenantDeletion(c.env, c.var.settings, opened.id, caller);
  } catch (error) {
    console.warn(`tenant ${id} deletion paused (it will be resumed): ${error instanceof Error ? error.message : String(error)}`);
    return { done: false, operation: await platform(c.env).operations().get(opened.id) };
  }
  forgetTenantHost(c, id);
  await runAfter(hooks.onTenantDeleted, { tenant: doomed, actor: actorOf(c) });
  return { done: operation?.status === "succeeded", operation };
}
