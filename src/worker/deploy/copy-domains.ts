import { platform } from "../tenant/stubs";
import { namespaceFrom } from "./namespace";
import { pushCustomDomains } from "./provisioner";

/**
 * After a custom-domain write on the control plane, a wfp tenant's copy gets the tenant's current domains
 * (issue 16 with issue 15): the dispatcher routes a ready domain to the copy, and the copy must know it to
 * resolve the host and name `https://<domain>/` as its issuer. Best effort: a copy that cannot be reached now
 * is brought up to date by its next provisioning step (seed-defaults of a redeploy), which pushes them again.
 */
export async function syncCopyDomains(env: Env, tenantId: string): Promise<void> {
  try {
    const tenant = await platform(env).tenants().get(tenantId);
    if (tenant?.deployment_type !== "wfp" || tenant.provisioning_state !== "ready") return;
    const namespace = namespaceFrom(env);
    if (!namespace) return;
    await pushCustomDomains({ env, namespace }, tenant);
  } catch (error) {
    console.warn(`custom domains of tenant ${tenantId} were not mirrored to its copy (a redeploy mirrors them): ${error instanceof Error ? error.message : String(error)}`);
  }
}
