import { sandboxLimitsFrom } from "../../shared/actions/sandbox";
import { type EgressPolicy, egressPolicyFrom } from "../../shared/egress-policy";
import type { Sql } from "../sql";
import { codeHookDestination } from "./actions/code-hooks";
import { executionRetentionJob } from "./actions/executions";
import { logStreamJob } from "./outbox/log-streams";
import type { AlarmJob } from "./core/publisher";
import type { Destination } from "./core/relay";

/** A positive number from a deployment variable, or the fallback. */
function positive(value: unknown, fallback: number): number {
  const n = Number(value);
  return value !== undefined && value !== "" && Number.isFinite(n) && n > 0 ? n : fallback;
}

/** The archive pipeline of SPEC §6.3 (`OUTBOX_PIPELINE_ENDPOINT`, `OUTBOX_PIPELINE_TOKEN`); unset: none. */
export type PipelineConfig = { endpoint: string; token: string | undefined } | undefined;

/**
 * What actions and log streams add to a tenant object (issue 13), read once from the deployment's variables:
 * the code-hooks destination of the relay, the alarm jobs (execution retention, log streams and the
 * pipeline) and the egress policy of tenant-chosen URLs. Variables: ACTIONS_EXECUTION_RETENTION_DAYS (10),
 * LOG_STREAM_SUSPEND_AFTER_MS (86,400,000), ACTIONS_TIMEOUT_MS, ACTIONS_STEP_BUDGET, ACTIONS_CPU_MS (docs/actions.md,
 * "Sandbox"), ALLOW_LOOPBACK_EGRESS and ISSUER (docs/security.md, "Egress policy").
 */
export function tenantExtensions(
  sql: Sql,
  tenantId: string,
  env: Env,
  exports?: unknown,
): { codeHooks: Destination; jobs: AlarmJob[]; pipeline: PipelineConfig; egress: EgressPolicy } {
  const vars = env as unknown as Record<string, unknown>;
  const codeHooks = codeHookDestination(sql, tenantId, { loader: env.LOADER, encryptionKey: env.ENCRYPTION_KEY, limits: sandboxLimitsFrom(vars), exports, vars });
  const retention = vars.ACTIONS_EXECUTION_RETENTION_DAYS === "0" ? 0 : positive(vars.ACTIONS_EXECUTION_RETENTION_DAYS, 10);
  const suspendAfterMs = positive(vars.LOG_STREAM_SUSPEND_AFTER_MS, 86_400_000);
  const endpoint = vars.OUTBOX_PIPELINE_ENDPOINT;
  const pipeline: PipelineConfig =
    typeof endpoint === "string" && endpoint ? { endpoint, token: typeof vars.OUTBOX_PIPELINE_TOKEN === "string" ? vars.OUTBOX_PIPELINE_TOKEN : undefined } : undefined;
  const egress = egressPolicyFrom(env);
  const jobs = [
    executionRetentionJob(sql, () => retention),
    logStreamJob(sql, { encryptionKey: env.ENCRYPTION_KEY, egress, suspendAfterMs: () => suspendAfterMs, pipelineToken: typeof vars.OUTBOX_PIPELINE_TOKEN === "string" ? vars.OUTBOX_PIPELINE_TOKEN : undefined }),
  ];
  return { codeHooks, jobs, pipeline, egress };
}
