import { CODE_SHARDS, codeShardNameAt } from "../../shared/object-names";
import { now } from "../../shared/clock";
import { unwrap } from "../../shared/errors";
import type { AuditContext, Json, Tenant, TenantOperation } from "../../shared/types";
import { certificateProvider } from "../management/tenants/custom-domains";
import { onDeprovision } from "../deploy/lifecycle";
import { forgetHost } from "../routing/resolve-tenant";
import type { Settings } from "../settings";
import { invalidateTenantConfig } from "./config-cache";
import { forgetTenant, platform, tenantObject, userObject } from "./stubs";
import { removeTenantOrganization } from "./tenant-organization";

/**
 * Tenant deletion as a journaled operation (issue 15 point 4; kind `delete` in the operations journal of
 * issue 16). Opening it records the plan (the tenant and its domains' certificate-provider references) in
 * the same commit; then each step runs between `started` and `succeeded` / `failed` journal events. Every
 * step is idempotent and needs only the plan, so a run that died (a crash, a failed step) is simply run
 * again by the stale-operation sweep (src/worker/deploy/resume.ts: the cron, and requests every 30 s), which
 * skips the steps that already succeeded and finishes the rest.
 */
export const DELETION_STEPS = [
  // The tenant stops resolving first: its row (and its domains' rows) leave the registry.
  "unregister",
  "release-domains",
  "deprovision",
  // Before the tenant's own data: the tenant is the one that knows its users.
  "delete-users",
  "delete-organization",
  "delete-tenant-data",
] as const;

export type DeletionStep = (typeof DELETION_STEPS)[number];

interface DeletionPlan {
  tenant: Tenant;
  domains: { domain: string; ref: string | null }[];
}

interface Caller {
  audit?: AuditContext;
  logTenantId?: string | null;
  requestedBy?: string | null;
}

/** Who acts when the sweep resumes a deletion. */
const SYSTEM_AUDIT: AuditContext = { actor: { type: "system", id: null } };

/** How many user objects one page of the `delete-users` step wipes. */
const USER_PAGE = 200;

/** Opens the deletion of a tenant (409 `operation_in_progress` while another operation of it runs). */
export async function openTenantDeletion(env: Env, tenant: Tenant, caller: Caller = {}): Promise<TenantOperation> {
  const registry = platform(env);
  const domains = await Promise.all(
    (await registry.domains().list(tenant.id)).map(async (d) => ({ domain: d.domain, ref: await registry.domains().providerRef(d.custom_domain_id) })),
  );
  const plan = { tenant, domains } as unknown as { [key: string]: Json };
  return unwrap(await registry.operations(caller.audit, caller.logTenantId ?? null).openDeletion(tenant.id, plan, caller.requestedBy ?? null));
}

/** One step's work. */
async function runStep(env: Env, settings: Settings, step: DeletionStep, plan: DeletionPlan, caller: Caller): Promise<{ [key: string]: Json }> {
  const id = plan.tenant.id;
  switch (step) {
    case "unregister": {
      const removed = await platform(env).tenants(caller.audit, caller.logTenantId ?? null).delete(id);
      forgetTenant(id);
      forgetHost(`${id}.${settings.apexHost}`);
      if (settings.baseDomain) forgetHost(`${id}.${settings.baseDomain}`);
      invalidateTenantConfig(id);
      return { removed };
    }
    case "release-domains": {
      const provider = certificateProvider(settings);
      for (const { domain, ref } of plan.domains) {
        forgetHost(domain);
        // Best effort per hostname: the provider may have forgotten it already.
        if (ref) await provider.remove(ref).catch(() => undefined);
      }
      return { domains: plan.domains.length };
    }
    case "deprovision":
      await onDeprovision(env, plan.tenant);
      return {};
    case "delete-users": {
      const tenant = tenantObject(env, id);
      let after: string | null = null;
      let wiped = 0;
      for (;;) {
        const ids: string[] = await tenant.userIdsAfter(after, USER_PAGE);
        for (const userId of ids) await userObject(env, id, userId).wipe();
        wiped += ids.length;
        if (ids.length < USER_PAGE) break;
        after = ids[ids.length - 1] ?? null;
      }
      // The code shards (issue 31) hold redeemed codes and log rows on their way to the tenant's logs.
      for (let n = 0; n < CODE_SHARDS; n++) await env.CODES.getByName(codeShardNameAt(id, n)).wipe();
      return { users: wiped, code_shards: CODE_SHARDS };
    }
    case "delete-organization":
      await removeTenantOrganization(env, settings, id, caller.audit ?? SYSTEM_AUDIT);
      return {};
    case "delete-tenant-data":
      await tenantObject(env, id).destroy();
      invalidateTenantConfig(id);
      return {};
  }
}

/**
 * Runs (or resumes) a deletion to its end: the steps not yet journaled as succeeded, in order; then the
 * operation closes as succeeded. A step that throws is journaled `failed` and the operation stays running
 * (the sweep resumes it); the error is rethrown. `failAt` makes that step fail once (crash tests).
 */
export async function runTenantDeletion(
  env: Env,
  settings: Settings,
  operationId: string,
  caller: Caller & { failAt?: DeletionStep } = {},
): Promise<TenantOperation | null> {
  const ops = platform(env).operations();
  const current = await ops.get(operationId, false);
  if (current?.kind !== "delete") return current;
  if (current.status === "succeeded" || current.status === "failed") return current;
  await ops.start(operationId, null);
  const operation = await ops.get(operationId, true);
  const events = operation?.events ?? [];
  const plan = events.find((e) => e.step === "plan")?.detail as unknown as DeletionPlan | undefined;
  if (!plan?.tenant) return ops.finish(operationId, { status: "failed", error: "the deletion's plan is missing from the journal" });
  const done = new Set(events.filter((e) => e.status === "succeeded").map((e) => e.step));
  for (const step of DELETION_STEPS) {
    if (done.has(step)) continue;
    await ops.step(operationId, { step, status: "started" });
    const began = now();
    try {
      if (caller.failAt === step) throw new Error(`step ${step} failed (simulated)`);
      const detail = await runStep(env, settings, step, plan, caller);
      await ops.step(operationId, { step, status: "succeeded", duration_ms: now() - began, detail });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await ops.step(operationId, { step, status: "failed", duration_ms: now() - began, message });
      throw error;
    }
  }
  return ops.finish(operationId, { status: "succeeded" });
}
