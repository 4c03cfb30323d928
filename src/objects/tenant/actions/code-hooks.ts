import { dispatchTrigger } from "../../../shared/actions/dispatch";
import { type SandboxLimits, sandboxEgressFrom } from "../../../shared/actions/sandbox";
import type { Json } from "../../../shared/types";
import { MAX_TRIGGER_BINDINGS } from "../../../shared/schemas/actions";
import type { Sql } from "../../sql";
import { getSetting } from "../core/settings";
import { boundActions, compiledVersion } from "./actions";
import { recordExecution } from "./executions";
import type { HookEventPayload } from "../core/outbox";
import type { Destination } from "../core/relay";

/** Triggers whose actions run from the relay (SPEC §6.1 publish phase). */
const RELAYED = new Set(["post-user-registration", "post-user-deletion"]);

export interface CodeHookEnv {
  loader: WorkerLoader | undefined;
  encryptionKey: string | undefined;
  limits: SandboxLimits;
  /** The object's `ctx.exports` (the egress gateway) and the deployment's variables (its limits). */
  exports?: unknown;
  vars?: Record<string, unknown>;
}

/**
 * The code-hooks destination (SPEC §6.2), listed after the webhooks: runs the actions bound to a relayed
 * trigger in the sandbox with `event.idempotency_key` = the outbox event id (the same on every redelivery),
 * persists an execution per attempt, and throws when an action failed so the whole event is retried. No
 * loader binding: a no-op.
 */
export function codeHookDestination(sql: Sql, tenantId: string, env: CodeHookEnv): Destination {
  return {
    name: "code_hooks",
    lane: "network",
    // Every action a trigger may bind, in a row, each bounded by the sandbox timeout and its grace (the
    // claim lease is sized from this: it must bound a delivery, relay.ts `leaseMs`).
    timeoutMs: (env.limits.timeoutMs + 1000) * MAX_TRIGGER_BINDINGS,
    // The lease of a claimed event needs only the actions bound to its trigger now (none: nothing to wait for).
    boundMs: (type) => (env.loader ? (env.limits.timeoutMs + 1000) * (boundActions(sql)[type.slice("hook.".length)]?.length ?? 0) : 0),
    accepts: (type) => type.startsWith("hook.") && RELAYED.has(type.slice("hook.".length)),
    async deliver(event, now) {
      const loader = env.loader;
      if (!loader) return;
      const trigger = event.event_type.slice("hook.".length);
      const bound = boundActions(sql)[trigger] ?? [];
      if (!bound.length) return;
      const payload = event.payload as unknown as HookEventPayload;
      const outcome = await dispatchTrigger(
        {
          loader,
          encryptionKey: env.encryptionKey,
          tenantId,
          limits: env.limits,
          loadCode: async (versionId) => compiledVersion(sql, versionId),
          egress: sandboxEgressFrom(env.exports, env.vars ?? {}, getSetting<Record<string, unknown>>(sql, "tenant", {}).egress_allowlist),
        },
        trigger,
        bound,
        { ...(payload.data as Record<string, Json>), tenant: { id: tenantId }, idempotency_key: event.id },
      );
      recordExecution(sql, outcome.execution, now);
      if (outcome.stop?.kind === "failed") throw new Error(`action ${outcome.stop.action_name}: ${outcome.stop.message}`);
    },
  };
}
