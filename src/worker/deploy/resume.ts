import { now } from "../../shared/clock";
import { settingsOf } from "../settings";
import { runTenantDeletion } from "../tenant/tenant-deletion";
import { platform } from "../tenant/stubs";

/**
 * Crash recovery of deployment runs (issue 16 fault test): a workflow whose process died may not resume by
 * itself (measured under `wrangler dev`: an instance interrupted by SIGKILL stays silent after a restart). Any
 * pending or running operation whose journal has not moved for DEPLOY_STALE_AFTER_MS (default 2 minutes,
 * longer than any step's retry backoff) is restarted: its steps are idempotent, so running them again from
 * the top finishes the work. Called from the cron safety net and, at most every 30 s per isolate, from requests.
 * A tenant deletion (kind `delete`, issue 15 point 4) has no workflow: it is run again here, in place.
 */
export async function resumeStaleOperations(env: Env): Promise<string[]> {
  const binding = env.DEPLOYMENT_WORKFLOW;
  const e = env as unknown as Record<string, string | undefined>;
  const idleMs = Number(e.DEPLOY_STALE_AFTER_MS ?? 120_000);
  const ops = platform(env).operations();
  const resumed: string[] = [];
  for (const op of await ops.stale(Number.isFinite(idleMs) ? idleMs : 120_000)) {
    if (op.kind !== "delete" && !binding) continue;
    await ops.touch(op.id);
    if (op.kind === "delete") {
      await runTenantDeletion(env, settingsOf(env), op.id).catch((error) => console.warn(`resuming tenant deletion ${op.id}: ${String(error)}`));
      resumed.push(op.id);
      continue;
    }
    if (!binding) continue;
    const instanceId = op.instance_id ?? op.id;
    try {
      const instance = await binding.get(instanceId);
      await instance.restart();
    } catch {
      // The instance is gone (or never started): run the operation in a new one.
      await binding.create({ id: `${op.id}-r${now()}`, params: { operation_id: op.id } });
    }
    resumed.push(op.id);
  }
  return resumed;
}

let lastSweep = 0;

/** At most one sweep per isolate every 30 s, off the request's critical path. */
export function maybeResume(env: Env, ctx: ExecutionContext): void {
  const t = now();
  if (t - lastSweep < 30_000) return;
  lastSweep = t;
  ctx.waitUntil(resumeStaleOperations(env).catch((error) => console.warn(`resuming stale deployment operations failed: ${String(error)}`)));
}
