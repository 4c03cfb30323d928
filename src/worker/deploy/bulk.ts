import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep } from "cloudflare:workers";
import { platform } from "../tenant/stubs";
import { onUpgrade } from "./lifecycle";

/** A bulk upgrade: these tenants, in this order, onto one release, at most `concurrency` at a time. */
export interface BulkUpgradeParams {
  tenant_ids: string[];
  worker_version: string;
  concurrency: number;
  requested_by: string | null;
}

export interface BulkUpgradeResult {
  status: "succeeded" | "failed";
  upgraded: string[];
  /** The tenant whose upgrade failed first (its pin stayed), and why. */
  failed: { tenant_id: string; operation_id: string | null; error: string } | null;
  /** Tenants never started because the run stopped at the first failure. */
  skipped: string[];
}

/**
 * Bulk upgrades (issue 16 point 6): tenant by tenant, `concurrency` at a time, each an ordinary journaled
 * upgrade operation; the run stops at the first failure (the batch in flight finishes, nothing after it
 * starts). Durable like provisioning: a restarted run resumes after its last completed step.
 */
export class BulkUpgradeWorkflow extends WorkflowEntrypoint<Env, BulkUpgradeParams> {
  async run(event: WorkflowEvent<BulkUpgradeParams>, step: WorkflowStep): Promise<BulkUpgradeResult> {
    const { tenant_ids, worker_version, requested_by } = event.payload;
    const concurrency = Math.max(1, Math.min(10, event.payload.concurrency));
    const upgraded: string[] = [];
    for (let start = 0; start < tenant_ids.length; start += concurrency) {
      const batch = tenant_ids.slice(start, start + concurrency);
      const started = await step.do(`start-${start}`, async () => {
        const out: { tenant_id: string; operation_id: string | null; error: string | null }[] = [];
        for (const id of batch) {
          const tenant = await platform(this.env).tenants().get(id);
          if (tenant?.deployment_type !== "wfp") {
            out.push({ tenant_id: id, operation_id: null, error: tenant ? "not a wfp tenant" : "tenant not found" });
            continue;
          }
          if (tenant.worker_version === worker_version && tenant.provisioning_state === "ready") {
            out.push({ tenant_id: id, operation_id: null, error: null });
            continue;
          }
          try {
            const op = await onUpgrade(this.env, tenant, "upgrade", worker_version, { requestedBy: requested_by });
            out.push({ tenant_id: id, operation_id: op.id, error: null });
          } catch (error) {
            out.push({ tenant_id: id, operation_id: null, error: error instanceof Error ? error.message : String(error) });
          }
        }
        return out;
      });
      // Wait for the batch: one check per step, a pause between checks.
      let outcome: { tenant_id: string; operation_id: string | null; error: string | null }[] = started;
      for (let check = 0; ; check++) {
        outcome = await step.do(`check-${start}-${check}`, async () => {
          const ops = platform(this.env).operations();
          const out = [];
          for (const s of started) {
            if (!s.operation_id || s.error) {
              out.push(s);
              continue;
            }
            const op = await ops.get(s.operation_id, false);
            const error = op?.status === "failed" ? (op.error ?? "upgrade failed") : null;
            const pending = op?.status === "pending" || op?.status === "running";
            out.push({ tenant_id: s.tenant_id, operation_id: s.operation_id, error: pending ? "__pending__" : error });
          }
          return out;
        });
        if (!outcome.some((o) => o.error === "__pending__")) break;
        await step.sleep(`wait-${start}-${check}`, "1 second");
      }
      const failed = outcome.find((o) => o.error !== null);
      upgraded.push(...outcome.filter((o) => o.error === null).map((o) => o.tenant_id));
      if (failed) {
        return {
          status: "failed",
          upgraded,
          failed: { tenant_id: failed.tenant_id, operation_id: failed.operation_id, error: failed.error as string },
          skipped: tenant_ids.slice(start + concurrency),
        };
      }
    }
    return { status: "succeeded", upgraded, failed: null, skipped: [] };
  }
}
