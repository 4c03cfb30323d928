import { z } from "zod";
import { problem } from "../../../shared/errors";
import type { Tenant, TenantOperation } from "../../../shared/types";
import type { AppContext } from "../../context";
import { onUpgrade, resolveRelease } from "../../deploy/lifecycle";
import { auditContext } from "../../http/audit";
import { forgetHost } from "../../routing/resolve-tenant";
import { platform } from "../../tenant/stubs";
import { defineRoute } from "../define";

/**
 * The operations journal and the operations that write it (issue 16 point 5; SPEC §4.2 "tenants", §9):
 * provisioning, redeploy and upgrade of per-tenant deployments, step by step.
 */

const KINDS = ["provision", "redeploy", "upgrade", "deprovision", "delete"] as const;
const STATUSES = ["pending", "running", "succeeded", "failed"] as const;

const intParam = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be an integer`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${name} must be between ${min} and ${max}`);

const operationsQuery = z.looseObject({
  page: intParam("page", 0, 1_000_000).optional().describe("0-based page; default 0"),
  per_page: intParam("per_page", 1, 100).optional().describe("1-100; default 50"),
  kind: z.enum(KINDS).optional().describe("provision | redeploy | upgrade | deprovision"),
  status: z.enum(STATUSES).optional().describe("pending | running | succeeded | failed"),
});

const version = z.string().trim().min(1).max(128).regex(/^[A-Za-z0-9][A-Za-z0-9._+-]*$/, "worker_version must be a release name");

/** POST /tenants/{id}/operations: only `upgrade` is an operation a caller starts (SPEC §4.2). */
const createOperationBody = z.strictObject({
  kind: z.literal("upgrade"),
  worker_version: version.optional(),
});

/** A tenant's operations are visible to the control plane and to the tenant itself (SPEC §5.4). */
function assertCanRead(c: AppContext, tenantId: string): void {
  if (tenantId !== c.var.auth.tenantId && !c.var.auth.isControlPlane) throw problem("cross_tenant_forbidden");
}

async function loadTenant(c: AppContext, id: string): Promise<Tenant> {
  const tenant = await platform(c.env).tenants().get(id);
  if (!tenant) throw problem("tenant_not_found");
  return tenant;
}

/** The shared worker's own release (WORKER_VERSION when set, else "current"); a shared tenant can be on no other. */
function sharedRelease(c: AppContext, requested: string | undefined): string {
  const own = c.env.WORKER_VERSION ?? "current";
  if (requested && requested !== own) {
    throw problem("tenant_not_wfp", { tenant_id: c.req.param("id") ?? "", detail: `it runs the shared worker's release (${own}), not ${requested}` });
  }
  return own;
}

function caller(c: AppContext) {
  return { audit: auditContext(c), logTenantId: c.var.auth.tenantId, requestedBy: c.var.auth.subject || null };
}

const present = (op: TenantOperation) => op;

/** POST /operations/upgrades: a bulk upgrade (issue 16 point 6). */
const bulkUpgradeBody = z.strictObject({
  worker_version: version.optional(),
  bundle_configuration: z.string().trim().min(1).max(128).optional(),
  /** In this order; default every wfp tenant of the configuration, oldest first. */
  tenant_ids: z.array(z.string().min(1).max(63)).min(1).max(1000).optional(),
  concurrency: z.number().int().min(1).max(10).optional(),
});

function bulkWorkflow(c: AppContext) {
  const binding = c.env.BULK_UPGRADE_WORKFLOW;
  if (!binding) throw problem("not_implemented", { detail: "bulk upgrades need the BULK_UPGRADE_WORKFLOW binding" });
  return binding;
}

export const operationRoutes = [
  defineRoute({
    method: "post",
    path: "/operations/upgrades",
    scope: "create:tenant_operations",
    summary: "Upgrade many wfp tenants onto one release, tenant by tenant with a concurrency limit, stopping at the first failure",
    body: bulkUpgradeBody,
    status: 202,
    async handler(c, { body }) {
      if (!c.var.auth.isControlPlane) throw problem("cross_tenant_forbidden");
      const configuration = body.bundle_configuration ?? "default";
      const target = await resolveRelease(c.env, configuration, body.worker_version);
      const wfp = await platform(c.env).tenants().listWfp();
      const tenantIds = body.tenant_ids ?? wfp.filter((t) => t.bundle_configuration === configuration).map((t) => t.id);
      const known = new Set(wfp.map((t) => t.id));
      const unknown = tenantIds.find((id) => !known.has(id));
      if (unknown) throw problem("tenant_not_wfp", { tenant_id: unknown, detail: "not a wfp tenant (or no such tenant)" });
      const instance = await bulkWorkflow(c).create({
        params: { tenant_ids: tenantIds, worker_version: target, concurrency: body.concurrency ?? 1, requested_by: c.var.auth.subject || null },
      });
      return c.json({ id: instance.id, status: "running", worker_version: target, tenant_ids: tenantIds, concurrency: body.concurrency ?? 1 }, 202);
    },
  }),
  defineRoute({
    method: "get",
    path: "/operations/upgrades/{id}",
    scope: "read:tenant_operations",
    summary: "A bulk upgrade's progress and outcome (upgraded, the first failure, skipped tenants)",
    status: 200,
    async handler(c, { params }) {
      if (!c.var.auth.isControlPlane) throw problem("cross_tenant_forbidden");
      let status: InstanceStatus;
      try {
        status = await (await bulkWorkflow(c).get(params.id)).status();
      } catch {
        throw problem("inexistent_operation");
      }
      const state = status.status === "complete" ? ((status.output as { status?: string } | undefined)?.status ?? "succeeded") : status.status === "errored" ? "failed" : "running";
      return c.json({ id: params.id, status: state, result: status.output ?? null, error: status.error?.message ?? null });
    },
  }),
  defineRoute({
    method: "get",
    path: "/tenants/{id}/operations",
    scope: "read:tenant_operations",
    summary: "A tenant's operations (provisioning, redeploy, upgrade), newest first; filter by kind and status",
    query: operationsQuery,
    status: 200,
    async handler(c, { params, query }) {
      assertCanRead(c, params.id);
      await loadTenant(c, params.id);
      const page = query.page ?? 0;
      const perPage = query.per_page ?? 50;
      const { operations, total } = await platform(c.env)
        .operations()
        .list(params.id, { page, per_page: perPage, ...(query.kind ? { kind: query.kind } : {}), ...(query.status ? { status: query.status } : {}) });
      return c.json({ operations: operations.map(present), total, page, per_page: perPage });
    },
  }),
  defineRoute({
    method: "get",
    path: "/operations/{id}",
    scope: "read:tenant_operations",
    summary: "One tenant operation with its step timeline (every step attempt: started, succeeded, failed)",
    status: 200,
    async handler(c, { params }) {
      const op = await platform(c.env).operations().get(params.id, true);
      // Another tenant's operation is as absent as a missing one: ids are not probed across tenants.
      if (!op || (op.tenant_id !== c.var.auth.tenantId && !c.var.auth.isControlPlane)) throw problem("inexistent_operation");
      return c.json(op);
    },
  }),
  defineRoute({
    method: "post",
    path: "/tenants/{id}/operations",
    scope: "create:tenant_operations",
    summary: "Start an upgrade of a per-tenant deployment (control plane only): to worker_version, or the current release",
    body: createOperationBody,
    status: 201,
    async handler(c, { params, body }) {
      if (!c.var.auth.isControlPlane) throw problem("cross_tenant_forbidden");
      const tenant = await loadTenant(c, params.id);
      // A shared tenant runs the shared worker's code: its upgrade moves its object's schema onto that code's.
      const target =
        tenant.deployment_type === "wfp"
          ? await resolveRelease(c.env, tenant.bundle_configuration, body.worker_version)
          : sharedRelease(c, body.worker_version);
      const op = await onUpgrade(c.env, tenant, "upgrade", target, caller(c));
      return c.json(op, 201);
    },
  }),
  defineRoute({
    method: "post",
    path: "/tenants/{id}/redeploy",
    scope: "create:tenant_operations",
    summary: "Re-provision a per-tenant deployment onto its pinned release (retries a failed provisioning)",
    status: 202,
    async handler(c, { params }) {
      if (!c.var.auth.isControlPlane) throw problem("cross_tenant_forbidden");
      const tenant = await loadTenant(c, params.id);
      if (tenant.deployment_type !== "wfp") {
        throw problem("tenant_not_wfp", { tenant_id: tenant.id, detail: "it is served by the shared worker and has nothing to redeploy" });
      }
      const target = await resolveRelease(c.env, tenant.bundle_configuration, tenant.worker_version);
      const op = await onUpgrade(c.env, tenant, "redeploy", target, caller(c));
      forgetHost(`${tenant.id}.${c.var.settings.apexHost}`);
      return c.json(op, 202);
    },
  }),
];
