import type { TenantConfig } from "../../shared/types";
import type { ConnectionRecord } from "../../shared/schemas/connections";
import type { ResourceServerRecord } from "../../shared/schemas/resource-servers";
import type { Settings } from "../settings";

/**
 * Control-plane inheritance at read time (SPEC §1 "Multi-tenancy", "Control-plane inheritance"; issue 15
 * point 2): a child tenant sees the control plane's connections and APIs where it has none of its own (by
 * connection name, by API identifier), marked `inherited` and read-only. Nothing is ever copied: the merge
 * happens in the worker's snapshot, and management reads never write the inherited rows back.
 */

/** The tenant a child inherits from, or null (inheritance off, the control plane itself, or opted out). */
export async function parentOf(settings: Settings, tenantId: string): Promise<string | null> {
  if (!settings.inheritFromControlPlane || tenantId === settings.controlPlaneTenantId) return null;
  if (!settings.resolveControlPlane) return settings.controlPlaneTenantId;
  const resolved = await settings.resolveControlPlane({ tenant_id: tenantId });
  return resolved?.tenantId && resolved.tenantId !== tenantId ? resolved.tenantId : null;
}

export type Inherited<T> = T & { inherited: true };

/** The parent's connections the child does not shadow by name. */
export function inheritedConnections(own: readonly ConnectionRecord[], parent: readonly ConnectionRecord[]): Inherited<ConnectionRecord>[] {
  const names = new Set(own.map((c) => c.name.toLowerCase()));
  const ids = new Set(own.map((c) => c.id));
  return parent.filter((c) => !names.has(c.name.toLowerCase()) && !ids.has(c.id)).map((c) => ({ ...c, inherited: true as const }));
}

/** The parent's APIs the child does not shadow by identifier; the system (management) API is never inherited. */
export function inheritedResourceServers(
  own: readonly ResourceServerRecord[],
  parent: readonly ResourceServerRecord[],
): Inherited<ResourceServerRecord>[] {
  const identifiers = new Set(own.map((r) => r.identifier));
  const ids = new Set(own.map((r) => r.id));
  return parent
    .filter((r) => !r.is_system && !identifiers.has(r.identifier) && !ids.has(r.id))
    .map((r) => ({ ...r, inherited: true as const }));
}

/** The child's snapshot with the parent's connections and APIs appended after its own. */
export function mergeInherited(own: TenantConfig, parent: TenantConfig): TenantConfig {
  return {
    ...own,
    connections: [...own.connections, ...inheritedConnections(own.connections, parent.connections)],
    resourceServers: [...own.resourceServers, ...inheritedResourceServers(own.resourceServers, parent.resourceServers)],
  };
}
