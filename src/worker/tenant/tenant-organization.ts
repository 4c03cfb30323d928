import { randomId } from "../../shared/crypto/random";
import { unwrap } from "../../shared/errors";
import { MANAGEMENT_AUDIENCE } from "../../shared/scopes";
import type { AuditContext, Tenant } from "../../shared/types";
import type { Settings } from "../settings";
import { tenantObject } from "./stubs";

/**
 * The tenant's organization on the control plane (SPEC "Control-plane inheritance"; issue 15 point 3): one
 * organization per tenant, named after its id (an organization name is at most 50 characters, so longer
 * ids keep their first 41 and a hash-like suffix), `metadata.tenant_id` naming the tenant. Idempotent:
 * a tenant whose organization exists keeps it.
 */
export function tenantOrganizationName(tenantId: string): string {
  if (tenantId.length <= 50) return tenantId;
  let hash = 0;
  for (const ch of tenantId) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return `${tenantId.slice(0, 41)}-${hash.toString(36).padStart(8, "0").slice(0, 8)}`;
}

export async function ensureTenantOrganization(env: Env, settings: Settings, tenant: Tenant, audit: AuditContext): Promise<string> {
  const organizations = tenantObject(env, settings.controlPlaneTenantId).organizations(audit);
  const name = tenantOrganizationName(tenant.id);
  const existing = await organizations.getByName(name);
  if (existing) return existing.id;
  const roleIds = await ensureDefaultRoles(env, settings, audit);
  const created = unwrap(
    await organizations.create({
      id: randomId("org_", 16),
      name,
      display_name: (tenant.friendly_name ?? tenant.name).slice(0, 255),
      // The roles its members are offered (SPEC "defaultPermissions, defaultRoles"), assigned per member.
      metadata: { tenant_id: tenant.id, ...(roleIds.length ? { default_roles: roleIds.join(",").slice(0, 255) } : {}) },
      enabled_connections: [],
    }),
  );
  return created.id;
}

/** The control-plane role that carries `defaultPermissions`. */
export const TENANT_ADMIN_ROLE = "Tenant administrator";

/**
 * The control-plane roles a new tenant organization offers (host options `defaultRoles`, and
 * `defaultPermissions` gathered on the role "Tenant administrator"): looked up by exact name, created when
 * absent; the permissions are on the management API and are added idempotently. Their ids, in order.
 */
export async function ensureDefaultRoles(env: Env, settings: Settings, audit: AuditContext): Promise<string[]> {
  const { permissions, roles: names } = settings.tenantOrganizationDefaults;
  const wanted = [...new Set([...(permissions.length ? [TENANT_ADMIN_ROLE] : []), ...names])];
  if (!wanted.length) return [];
  const roles = tenantObject(env, settings.controlPlaneTenantId).roles(audit);
  const ids: string[] = [];
  for (const name of wanted) {
    const found = (await roles.list({ offset: 0, limit: 100 }, name)).items.find((r) => r.name === name);
    const role = found ?? unwrap(await roles.create({ id: randomId("rol_"), name, description: "Offered to the members of tenant organizations" }));
    if (name === TENANT_ADMIN_ROLE && permissions.length) {
      unwrap(await roles.addPermissions(role.id, permissions.map((p) => ({ resource_server_identifier: MANAGEMENT_AUDIENCE, permission_name: p }))));
    }
    ids.push(role.id);
  }
  return ids;
}

/** The tenant an organization of the control plane stands for (`metadata.tenant_id`), or null. */
export async function tenantOfOrganization(env: Env, settings: Settings, organizationId: string): Promise<string | null> {
  const org = await tenantObject(env, settings.controlPlaneTenantId).organizations().get(organizationId);
  const id = org?.metadata?.tenant_id;
  return typeof id === "string" && id ? id : null;
}

/** Removes the tenant's organization from the control plane (tenant deletion); absent is fine. */
export async function removeTenantOrganization(env: Env, settings: Settings, tenantId: string, audit: AuditContext): Promise<void> {
  const organizations = tenantObject(env, settings.controlPlaneTenantId).organizations(audit);
  const existing = await organizations.getByName(tenantOrganizationName(tenantId));
  if (existing && existing.metadata?.tenant_id === tenantId) await organizations.delete(existing.id);
}
