import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep } from "cloudflare:workers";
import { now } from "../../shared/clock";
import type { Json, Tenant, TenantOperation } from "../../shared/types";
import { platform } from "../tenant/stubs";
import { namespaceFrom } from "./namespace";
import { type DeployTarget, GENERATED_SECRETS, runSharedStep, runStep, SHARED_STEPS, STEPS, type StepDeps, type StepName } from "./provisioner";
import { releaseStoreFrom } from "./releases";
import { otherSlot, runSlotStep, SLOT_STEPS, type SlotPlan, teardownStaged } from "./slots";

/** What starts a deployment run: the journal row it executes. */
export interface DeployParams {
  operation_id: string;
}

/** Step retries (issue 16: "retried with backoff"); DEPLOY_STEP_RETRIES / DEPLOY_STEP_RETRY_DELAY_MS override. */
interface RetryPolicy {
  limit: number;
  delayMs: number;
}

function stepConfig(env: Env): RetryPolicy {
  const e = env as unknown as Record<string, string | undefined>;
  const limit = Number(e.DEPLOY_STEP_RETRIES ?? 3);
  const delay = Number(e.DEPLOY_STEP_RETRY_DELAY_MS ?? 2000);
  return { limit: Number.isFinite(limit) ? limit : 3, delayMs: Number.isFinite(delay) ? delay : 2000 };
}

type StepOutput = { [key: string]: Json };

/**
 * A step retried with exponential backoff, one durable step per attempt (`name`, then `name#2`, ...) whose
 * callback never throws: a failed attempt is an output, so the executor does not log a step that fails on
 * purpose (an injected fault, a release that does not verify) as an uncaught exception, while the failure itself
 * is journaled and, after the last attempt, thrown here in the run, where the operation's failure path takes it.
 * A resumed or replayed run gets every finished attempt back from the executor.
 */
async function retried(step: WorkflowStep, name: string, policy: RetryPolicy, run: (attempt: number) => Promise<StepOutput>): Promise<StepOutput> {
  for (let attempt = 1; ; attempt++) {
    const id = attempt === 1 ? name : `${name}#${attempt}`;
    const out = (await step.do(id, { retries: { limit: 0, delay: 1 }, timeout: "5 minutes" }, async () => {
      try {
        return { ok: true, value: await run(attempt) };
      } catch (error) {
        return { ok: false, error: error instanceof Error ? error.message : String(error) };
      }
    })) as { ok: true; value: StepOutput } | { ok: false; error: string };
    if (out.ok) return out.value;
    if (attempt > policy.limit) throw new Error(out.error);
    await step.sleep(`${id} backoff`, Math.max(1, policy.delayMs * 2 ** (attempt - 1)));
  }
}

/** Serializable facts the run carries between steps (step outputs are persisted by the executor). */
interface Plan {
  operation: TenantOperation;
  tenant: Tenant;
  target: Omit<DeployTarget, "tenant">;
  /**
   * Two slots (slots.ts): an upgrade of a ready copy whose secrets the control plane holds. A copy provisioned
   * before secrets were kept is upgraded in place (upload, verify, roll back on failure), as before.
   */
  slotted?: boolean;
  /**
   * A previous run of this operation (interrupted, then resumed) already started the switch: the staged slot
   * verified and may hold the live data now, so the run goes straight to the (idempotent) switch.
   */
  switchStarted?: boolean;
}

function deps(env: Env): StepDeps {
  const namespace = namespaceFrom(env);
  const releases = releaseStoreFrom(env);
  if (!namespace || !releases) throw new Error("per-tenant deployment is not configured (NAMESPACE_API_URL or CLOUDFLARE_API_TOKEN, RELEASE_STORE_URL)");
  return { env, namespace, releases };
}

/**
 * The durable executor of tenant operations (issue 16 point 4): a Cloudflare Workflow, so a run survives a
 * crash or restart and resumes after its last completed step. Every step attempt is journaled (started,
 * then succeeded or failed with its duration and error); the outcome is applied in one commit: on success
 * the pin moves and a provisioning tenant becomes `ready`; on failure the pin stays (a failed upgrade rolls
 * the copy back to its pinned release) and a provisioning tenant becomes `failed` with the error.
 */
export class TenantDeploymentWorkflow extends WorkflowEntrypoint<Env, DeployParams> {
  async run(event: WorkflowEvent<DeployParams>, step: WorkflowStep): Promise<unknown> {
    const registry = platform(this.env);
    const operationId = event.payload.operation_id;
    const plan = await step.do("load", async (): Promise<Plan> => {
      const operation = await registry.operations().start(operationId, event.instanceId);
      if (!operation) throw new Error(`operation ${operationId} does not exist`);
      const tenant = await registry.tenants().get(operation.tenant_id);
      if (!tenant) throw new Error(`tenant ${operation.tenant_id} does not exist`);
      const sealed = await registry.deploySecrets().sealed(tenant.id);
      const journal = (await registry.operations().get(operationId, true))?.events ?? [];
      return {
        switchStarted: journal.some((e) => e.step === "switch" && e.status === "started"),
        operation,
        tenant,
        slotted:
          operation.kind === "upgrade" &&
          tenant.deployment_type === "wfp" &&
          tenant.provisioning_state === "ready" &&
          GENERATED_SECRETS.every((n) => sealed[n] !== undefined),
        target: {
          worker_version: operation.to_version ?? tenant.worker_version,
          bundle_configuration: operation.bundle_configuration ?? tenant.bundle_configuration,
          script_name: tenant.worker_script_name,
        },
      };
    });
    if (plan.operation.status === "succeeded" || plan.operation.status === "failed") return { status: plan.operation.status };
    const provisioning = plan.operation.kind !== "upgrade";
    const config = stepConfig(this.env);
    let tenant = plan.tenant;
    let uploaded = false;
    if (plan.tenant.deployment_type === "shared") return this.runShared(plan, step, config);
    if (plan.slotted) return this.runSlotted(plan, step, config);
    try {
      for (const name of STEPS) {
        const out = await retried(step, name, config, (attempt) => this.journaled(operationId, name, attempt, { ...plan.target, tenant }));
        if (name === "create-database" && typeof out.d1_database_id === "string") tenant = { ...tenant, d1_database_id: out.d1_database_id };
        if (name === "upload-script") uploaded = true;
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (plan.operation.kind === "upgrade" && uploaded && plan.operation.from_version) {
        // Leave the tenant serving on its old pin: the copy goes back to the pinned release.
        const from = plan.operation.from_version;
        await retried(step, "rollback", config, (attempt) =>
          this.journaled(operationId, "rollback", attempt, { ...plan.target, worker_version: from, tenant }, "upload-script"),
        );
      }
      return step.do("fail", async () => {
        const op = await registry.operations().finish(operationId, { status: "failed", error: message, provisioning });
        return { status: op?.status ?? "failed", error: message };
      });
    }
    return step.do("publish", async () => {
      const op = await registry.operations().finish(operationId, {
        status: "succeeded",
        provisioning,
        pin: {
          worker_version: plan.target.worker_version,
          bundle_configuration: plan.target.bundle_configuration,
          worker_script_name: plan.target.script_name,
          d1_database_id: tenant.d1_database_id,
        },
      });
      return { status: op?.status ?? "succeeded", worker_version: plan.target.worker_version };
    });
  }

  /**
   * A two-slot upgrade (slots.ts): the new release is staged, migrated and verified beside the live copy, and
   * only then does the route move (the pin and `worker_script_name`, in the publish commit). A failure before the
   * switch tears the staged slot down: the tenant's pin, route and running code never changed.
   */
  private async runSlotted(plan: Plan, step: WorkflowStep, config: RetryPolicy): Promise<unknown> {
    const registry = platform(this.env);
    const operationId = plan.operation.id;
    const target: DeployTarget = { ...plan.target, tenant: plan.tenant };
    const slots: SlotPlan = { live: plan.target.script_name, staged: otherSlot(plan.target.script_name) };
    let serving: string | null = null;
    let switching = plan.switchStarted === true;
    try {
      for (const name of SLOT_STEPS) {
        if (switching && name !== "switch") continue;
        if (name === "switch") switching = true;
        const out = await retried(step, name, config, (attempt) =>
          this.journaledWith(operationId, name, attempt, () => runSlotStep(name, deps(this.env), target, slots)),
        );
        if (name === "switch") serving = String(out.script_name);
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      let route: string | undefined;
      if (!switching) {
        await retried(step, "teardown", config, (attempt) => this.journaledWith(operationId, "teardown", attempt, () => teardownStaged(deps(this.env), slots)));
      } else if (plan.operation.from_version) {
        // The switch failed part-way: whichever slot now holds the data goes back to the pinned release.
        const from = plan.operation.from_version;
        const out = await retried(step, "rollback", config, (attempt) =>
          this.journaledWith(operationId, "rollback", attempt, async () => {
            const d = deps(this.env);
            const script = (await d.namespace.getScript(slots.live)) ? slots.live : slots.staged;
            return runStep("upload-script", d, { ...target, worker_version: from, script_name: script });
          }),
        );
        route = String(out.script_name);
      }
      return step.do("fail", async () => {
        const op = await registry.operations().finish(operationId, { status: "failed", error: message, route });
        return { status: op?.status ?? "failed", error: message };
      });
    }
    return step.do("publish", async () => {
      const op = await registry.operations().finish(operationId, {
        status: "succeeded",
        pin: { worker_version: plan.target.worker_version, bundle_configuration: plan.target.bundle_configuration, worker_script_name: serving as string },
      });
      return { status: op?.status ?? "succeeded", worker_version: plan.target.worker_version, worker_script_name: serving };
    });
  }

  /** A shared tenant's upgrade: its object's schema moves; the pin records the release it was verified on. */
  private async runShared(plan: Plan, step: WorkflowStep, config: RetryPolicy): Promise<unknown> {
    const registry = platform(this.env);
    const operationId = plan.operation.id;
    try {
      for (const name of SHARED_STEPS) {
        await retried(step, name, config, (attempt) => this.journaledWith(operationId, name, attempt, () => runSharedStep(name, this.env, plan.tenant.id, operationId)));
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return step.do("fail", async () => {
        await registry.operations().finish(operationId, { status: "failed", error: message });
        return { status: "failed", error: message };
      });
    }
    return step.do("publish", async () => {
      await registry.operations().finish(operationId, {
        status: "succeeded",
        pin: { worker_version: plan.target.worker_version, bundle_configuration: plan.target.bundle_configuration, worker_script_name: plan.target.script_name },
      });
      return { status: "succeeded", worker_version: plan.target.worker_version };
    });
  }

  private async journaledWith(operationId: string, journalName: string, attempt: number, run: () => Promise<{ [key: string]: Json }>): Promise<{ [key: string]: Json }> {
    const ops = platform(this.env).operations();
    await ops.step(operationId, { step: journalName, status: "started", attempt });
    const began = now();
    try {
      const detail = await run();
      await ops.step(operationId, { step: journalName, status: "succeeded", attempt, duration_ms: now() - began, detail });
      return detail;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await ops.step(operationId, { step: journalName, status: "failed", attempt, duration_ms: now() - began, message });
      throw error;
    }
  }

  /** One attempt of a step between its `started` and `succeeded` / `failed` journal events. */
  private async journaled(
    operationId: string,
    journalName: string,
    attempt: number,
    target: DeployTarget,
    stepName: StepName = journalName as StepName,
  ): Promise<{ [key: string]: Json }> {
    const ops = platform(this.env).operations();
    await ops.step(operationId, { step: journalName, status: "started", attempt });
    const began = now();
    try {
      const detail = await runStep(stepName, deps(this.env), target);
      await ops.step(operationId, { step: journalName, status: "succeeded", attempt, duration_ms: now() - began, detail });
      return detail;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await ops.step(operationId, { step: journalName, status: "failed", attempt, duration_ms: now() - began, message });
      throw error;
    }
  }
}
