import { ManagementError, problem } from "../../shared/errors";
import type { Tenant, TenantInput, TenantPatch } from "../../shared/types";

/** Who asked for a tenant change (the management token's tenant and client). */
export interface TenantHookActor {
  tenantId: string;
  clientId: string | null;
}

/**
 * Tenant lifecycle hooks (SPEC "Control-plane inheritance"; issue 15 point 4), host options of createApp.
 * The `-ing` hooks run before the change and may refuse it by throwing (a ManagementError keeps its status
 * and message; anything else is 400 `tenant_hook_refused`); the `-ed` hooks run after it committed, and
 * their failures are logged, never undo the change.
 */
export interface TenantLifecycleHooks {
  onTenantCreating?: (event: { tenant: TenantInput; actor: TenantHookActor }) => void | Promise<void>;
  onTenantCreated?: (event: { tenant: Tenant; actor: TenantHookActor }) => void | Promise<void>;
  onTenantUpdating?: (event: { tenant: Tenant; patch: TenantPatch; actor: TenantHookActor }) => void | Promise<void>;
  onTenantUpdated?: (event: { tenant: Tenant; before: Tenant; actor: TenantHookActor }) => void | Promise<void>;
  onTenantDeleting?: (event: { tenant: Tenant; actor: TenantHookActor }) => void | Promise<void>;
  onTenantDeleted?: (event: { tenant: Tenant; actor: TenantHookActor }) => void | Promise<void>;
}

/** Runs a refusing (`-ing`) hook. */
export async function runBefore<E>(hook: ((event: E) => void | Promise<void>) | undefined, event: E): Promise<void> {
  if (!hook) return;
  try {
    await hook(event);
  } catch (error) {
    if (error instanceof ManagementError) throw error;
    throw problem("tenant_hook_refused", { detail: error instanceof Error ? error.message : String(error) });
  }
}

/** Runs an after-the-fact (`-ed`) hook: a failure is reported, the change stands. */
export async function runAfter<E>(hook: ((event: E) => void | Promise<void>) | undefined, event: E): Promise<void> {
  if (!hook) return;
  try {
    await hook(event);
  } catch (error) {
    console.warn(`tenant lifecycle hook failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
