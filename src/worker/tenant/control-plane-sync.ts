import type { AppContext } from "../context";
import type { Settings } from "../settings";
import { tenantObject } from "./stubs";

/**
 * `sync` of control-plane inheritance (SPEC "Control-plane inheritance", default {resourceServers: true,
 * roles: true}; issue 15 point 2): a change to the control plane's roles, or to its management API's scopes
 * (a release that adds scopes re-seeds it), records a sync pass in the control plane's outbox. Its relay
 * applies the control plane's current state to every child, retrying until all are in step
 * (src/objects/tenant/control-plane-sync.ts). Nothing is propagated with inheritance off or the kind's sync off.
 */
export async function requestControlPlaneSync(env: Env, settings: Settings, tenantId: string, kind: "resourceServers" | "roles"): Promise<void> {
  if (!settings.inheritFromControlPlane || tenantId !== settings.controlPlaneTenantId || !settings.sync[kind]) return;
  await tenantObject(env, tenantId).controlPlaneSync().request({ resource_servers: kind === "resourceServers", roles: kind === "roles" });
}

/** After a role write through the management API: the target tenant's roles changed. */
export const rolesChanged = (c: AppContext) => requestControlPlaneSync(c.env, c.var.settings, c.var.tenant.id, "roles");
