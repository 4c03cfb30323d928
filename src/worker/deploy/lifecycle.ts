import { problem, unwrap } from "../../shared/errors";
import { otherSlot } from "../../shared/script-name";
import type { AuditContext, Tenant, TenantOperation } from "../../shared/types";
import { platform } from "../tenant/stubs";
import { namespaceFrom } from "./namespace";
import { releaseStoreFrom } from "./releases";

/**
 * The provisioning hook entry points (SPEC "Provisioning hook entry points"): each opens a journaled
 * operation and hands it to the durable executor (the TenantDeploymentWorkflow), returning at once; callers
 * poll GET /api/v2/tenants/{id} or the operation.
 */

interface Caller {
  audit?: AuditContext;
  logTenantId?: string | null;
  requestedBy?: string | null;
}

function workflow(env: Env) {
  const binding = (env as unknown as { DEPLOYMENT_WORKFLOW?: Workflow }).DEPLOYMENT_WORKFLOW;
  if (!binding) throw problem("not_implemented", { detail: "per-tenant deployment is not configured on this worker (no DEPLOYMENT_WORKFLOW binding)" });
  return binding;
}

/** Whether this worker can provision per-tenant copies (a namespace and a release store are configured). */
export function deploymentConfigured(env: Env): boolean {
  return namespaceFrom(env) !== null && releaseStoreFrom(env) !== null && Boolean((env as unknown as { DEPLOYMENT_WORKFLOW?: unknown }).DEPLOYMENT_WORKFLOW);
}

/** The release a request names, or the configuration's current one; 400 when the store lacks it. */
export async function resolveRelease(env: Env, configuration: string, version: string | undefined): Promise<string> {
  const store = releaseStoreFrom(env);
  if (!store) throw problem("not_implemented", { detail: "no release store is configured (RELEASE_STORE_URL or NAMESPACE_API_URL)" });
  const wanted = version && version !== "current" ? version : await store.current(configuration);
  if (!wanted) throw problem("release_not_found", { release: `${configuration}/current` });
  if (!(await store.find(configuration, wanted))) throw problem("release_not_found", { release: `${configuration}/${wanted}` });
  return wanted;
}

async function launch(env: Env, operation: TenantOperation): Promise<TenantOperation> {
  try {
    await workflow(env).create({ id: operation.id, params: { operation_id: operation.id } });
  } catch (error) {
    // Nothing will run it: close the operation (a provisioning tenant becomes `failed`, retried by a redeploy).
    const message = `the deployment workflow could not start: ${error instanceof Error ? error.message : String(error)}`;
    await platform(env).operations().finish(operation.id, { status: "failed", error: message, provisioning: operation.kind !== "upgrade" });
    throw error;
  }
  return operation;
}

/** onProvision(tenantId): first-time provisioning of a wfp tenant (its row is already `pending`). */
export async function onProvision(env: Env, tenant: Tenant, caller: Caller = {}): Promise<TenantOperation> {
  const op = unwrap(
    await platform(env)
      .operations(caller.audit, caller.logTenantId ?? null)
      .open({ tenant_id: tenant.id, kind: "provision", to_version: tenant.worker_version, requested_by: caller.requestedBy ?? null }, { markPending: true }),
  );
  return launch(env, op);
}

/**
 * onUpgrade(tenantId): `redeploy` re-provisions onto the tenant's pinned release (a failed tenant goes back
 * to `pending`); `upgrade` deploys another release and moves the pin only once it verified.
 */
export async function onUpgrade(
  env: Env,
  tenant: Tenant,
  kind: "upgrade" | "redeploy",
  version: string,
  caller: Caller = {},
): Promise<TenantOperation> {
  const op = unwrap(
    await platform(env)
      .operations(caller.audit, caller.logTenantId ?? null)
      .open(
        { tenant_id: tenant.id, kind, to_version: version, bundle_configuration: tenant.bundle_configuration, requested_by: caller.requestedBy ?? null },
        { markPending: kind === "redeploy" },
      ),
  );
  return launch(env, op);
}

/**
 * onDeprovision(tenantId): removes the tenant's scripts from the namespace (both upgrade slots; its database is
 * kept) and forgets the copy's secrets the control plane kept.
 */
export async function onDeprovision(env: Env, tenant: Tenant): Promise<void> {
  const namespace = namespaceFrom(env);
  if (!namespace || tenant.deployment_type !== "wfp") return;
  await namespace.deleteScript(tenant.worker_script_name);
  if (await namespace.getScript(otherSlot(tenant.worker_script_name))) await namespace.deleteScript(otherSlot(tenant.worker_script_name));
  await platform(env).deploySecrets().forget(tenant.id);
}
