import type { ActionWarning } from "../../shared/schemas/actions";
import { customClaims, type DroppedClaim } from "../../shared/actions/claims";
import { type DispatchEnv, type DispatchOptions, type DispatchOutcome, dispatchTrigger } from "../../shared/actions/dispatch";
import { sandboxEgressFrom, sandboxLimitsFrom } from "../../shared/actions/sandbox";
import type { Json, TenantConfig } from "../../shared/types";
import type { BoundAction } from "../../shared/schemas/actions";
import type { AppContext } from "../context";
import { tenantObject } from "../tenant/stubs";

/** What the front worker's dispatches share: the loader, the key, the limits, the tenant's code. */
export function workerDispatchEnv(c: AppContext, allowlist?: unknown): DispatchEnv {
  const stub = tenantObject(c.env, c.var.tenant.id);
  const vars = c.env as unknown as Record<string, unknown>;
  return {
    loader: c.env.LOADER,
    encryptionKey: c.env.ENCRYPTION_KEY,
    tenantId: c.var.tenant.id,
    limits: sandboxLimitsFrom(vars),
    loadCode: (versionId) => stub.actions().compiled(versionId),
    egress: sandboxEgressFrom(loopbackExports(c), vars, allowlist),
  };
}

/** `ctx.exports` of the request (loopback bindings to this worker's entrypoints), when the runtime has it. */
function loopbackExports(c: AppContext): unknown {
  try {
    return (c.executionCtx as unknown as { exports?: unknown }).exports;
  } catch {
    return undefined;
  }
}

/** The bound actions of a trigger in the configuration snapshot (none: the hot path does nothing). */
export const boundTo = (config: TenantConfig, triggerId: string): BoundAction[] => config.actions?.[triggerId] ?? [];

/** Runs a trigger's bound actions for a request of the front worker. */
export function dispatch(c: AppContext, config: TenantConfig, triggerId: string, event: Record<string, Json>, options: DispatchOptions = {}): Promise<DispatchOutcome> {
  return dispatchTrigger(workerDispatchEnv(c, config.settings.egress_allowlist), triggerId, boundTo(config, triggerId), event, options);
}

/** One warning per dropped claim (SPEC §6.2: the exchange continues, the tenant's logs say why). */
export function claimWarnings(dropped: readonly DroppedClaim[], who: { user_id?: string | null; client_id?: string | null }): ActionWarning[] {
  return dropped.map((d) => ({
    description: `Custom claim "${d.claim}" was not added to the ${d.target === "id_token" ? "ID" : "access"} token: ${REASONS[d.reason]}`,
    details: { claim: d.claim, token: d.target, reason: d.reason },
    user_id: who.user_id ?? null,
    client_id: who.client_id ?? null,
  }));
}

const REASONS: Record<DroppedClaim["reason"], string> = {
  restricted: "the claim is computed by the server and cannot be set by an action",
  reserved_name: "__proto__, constructor and prototype cannot be claim names",
  reserved_namespace: "the namespace is reserved",
  not_namespaced: "claims on tokens for the management API must be namespaced (a URL)",
  too_large: "custom claims exceed 100 KB",
};

/** The custom claims of each token after the rules, with the warnings of what was dropped. */
export function tokenClaims(
  c: AppContext,
  outcome: DispatchOutcome,
  options: { systemAudience: boolean; user_id?: string | null; client_id: string },
): { id_token: Record<string, Json>; access_token: Record<string, Json>; warnings: ActionWarning[] } {
  const rules = { allowAzp: c.var.actionOptions?.unsafeAllowAzpCustomClaim === true, systemAudience: options.systemAudience };
  const id = customClaims(outcome.commands, "id_token", rules);
  const access = customClaims(outcome.commands, "access_token", rules);
  return { id_token: id.claims, access_token: access.claims, warnings: claimWarnings([...id.dropped, ...access.dropped], options) };
}

/** Records an execution and its warnings, after the response when the platform allows it. */
export async function recordAfterResponse(c: AppContext, outcome: DispatchOutcome | null, warnings: ActionWarning[]): Promise<void> {
  const execution = outcome?.execution.results.length ? outcome.execution : null;
  if (!execution && !warnings.length) return;
  const write = tenantObject(c.env, c.var.tenant.id).actions().recordExecution(execution, warnings);
  let ctx: { waitUntil(promise: Promise<unknown>): void } | undefined;
  try {
    ctx = c.executionCtx;
  } catch {
    ctx = undefined;
  }
  if (ctx) ctx.waitUntil(write);
  else await write;
}
