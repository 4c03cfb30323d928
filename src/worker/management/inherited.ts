import { problem } from "../../shared/errors";
import type { ListPage, ListWindow } from "../../shared/types";
import type { HookRecord } from "../../shared/schemas/hooks";
import type { ConnectionRecord } from "../../shared/schemas/connections";
import type { ResourceServerRecord } from "../../shared/schemas/resource-servers";
import type { AppContext } from "../context";
import { tenantConfig } from "../tenant/config-cache";
import { parentOf } from "../tenant/inheritance";
import { tenantObject } from "../tenant/stubs";
import { targetTenant } from "./tenant-scoped";

/**
 * What the target tenant inherits from its parent (issue 15 point 2), read from the worker's merged
 * snapshot: management reads show these items marked `inherited: true`; writes to them are 403.
 */
export async function inheritedItems(c: AppContext): Promise<{ connections: ConnectionRecord[]; resourceServers: ResourceServerRecord[] }> {
  if (!(await parentOf(c.var.settings, c.var.tenant.id))) return { connections: [], resourceServers: [] };
  const config = await tenantConfig(c.var.tenant.id, targetTenant(c), c.var.settings);
  const isInherited = (x: object) => (x as { inherited?: boolean }).inherited === true;
  return { connections: config.connections.filter(isInherited), resourceServers: config.resourceServers.filter(isInherited) };
}

/**
 * The parent's webhooks the target tenant's flows also call (read from the parent's object, never copied),
 * marked `inherited: true`. Template hooks are the parent's own code paths and are not inherited.
 */
export async function inheritedHooks(c: AppContext, filter: { trigger_id?: string; enabled?: boolean } = {}): Promise<(HookRecord & { inherited: true })[]> {
  const parent = await parentOf(c.var.settings, c.var.tenant.id);
  if (!parent) return [];
  const hooks = await tenantObject(c.env, parent).hooks().list(filter);
  return hooks.filter((h) => !h.template_id).map((h) => ({ ...h, inherited: true as const }));
}

/** Refuses a write to an inherited item (read-only in the child). */
export function refuseInherited(items: readonly { id: string }[], id: string): void {
  if (items.some((x) => x.id === id)) throw problem("inherited_read_only");
}

/**
 * An offset-mode list with the inherited items after the tenant's own (newest first, then inherited):
 * the page window runs over both, and the total counts both. Checkpoint mode lists own items only.
 */
export function withInherited<T extends { created_at: string }>(
  fetch: (window: ListWindow) => Promise<ListPage<T>>,
  inherited: readonly T[],
): (window: ListWindow) => Promise<ListPage<T>> {
  return async (window) => {
    const page = await fetch(window);
    if (!("offset" in window) || inherited.length === 0 || page.total === null) return page;
    const ownTotal = page.total;
    const start = Math.max(0, window.offset - ownTotal);
    const room = window.limit - page.items.length;
    const extra = room > 0 ? inherited.slice(start, start + room) : [];
    return { items: [...page.items, ...extra], total: ownTotal + inherited.length };
  };
}
