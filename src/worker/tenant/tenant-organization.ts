import { randomId } from "../../shared/crypto/random";
import { unwrap } from "../../shared/errors";
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
  const created = unwrap(
    await organizations.create({
      id: randomId("org_", 16),
      name,
      display_name: (tenant.friendly_name ?? tenant.name).slice(0, 255),
      metadata: { tenant_id: tenant.id },
      enabled_connections: [],
    }),
  );
  return created.id;
}

/** Removes the tenant's organization from the control plane (tenant deletion); absent is fine. */
export async function removeTenantOrganization(env: Env, settings: Settings, tenantId: string, audit: AuditContext): Promise<void> {
  const organizations = tenantObject(env, settings.controlPlaneTenantId).organizations(audit);
  const existing = await organizations.getByName(tenantOrganizationName(tenantId));
  if (existing && existing.metadata?.tenant_id === tenantId) await organizations.delete(existing.id);
}
