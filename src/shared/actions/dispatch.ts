import { now } from "../clock";
import { isReservedKey } from "../object-keys";
import { encryptionContext } from "../crypto/contexts";
import { fieldCipher } from "../crypto/encryption";
import { randomId } from "../crypto/random";
import type { Json } from "../types";
import type { ActionExecutionRecord, ActionExecutionResult, BoundAction } from "../schemas/actions";
import { type ActionCommand, type ActionRun, runSandboxed, type SandboxEgress, type SandboxLimits } from "./sandbox";
import { triggerSpec } from "./triggers";

/** What a trigger's dispatch needs: where the code comes from and how secrets open. */
export interface DispatchEnv {
  loader: WorkerLoader;
  encryptionKey: string | undefined;
  tenantId: string;
  limits: SandboxLimits;
  /** The instrumented module of a version (the tenant object's `actions().compiled`). */
  loadCode(versionId: string): Promise<string | null>;
  /** Outbound requests through the egress gateway (issue 32); absent: the code has no network. */
  egress?: SandboxEgress | undefined;
}

/** How a dispatch ended for the flow that called it. */
export type DispatchStop =
  | { kind: "denied"; action_name: string; command: Extract<ActionCommand, { type: "deny" }> }
  | { kind: "failed"; action_name: string; message: string }
  /** `api.redirect.sendUserTo` (issue 32): the pipeline is suspended after this action, at `index`. */
  | { kind: "redirect"; action_name: string; action_id: string; index: number; url: string }
  /**
   * `api.authentication.challengeWith/enrollWith(Any)` (issue 32): the actions after this one wait until the
   * user passed or enrolled one of `factors` (the reference's rule); the pipeline resumes after `index`.
   */
  | { kind: "authentication"; action_name: string; action_id: string; index: number; op: "challenge" | "enroll"; factors: string[] };

/** Options of a dispatch that resumes a suspended pipeline or passes the harness more than the event. */
export interface DispatchOptions {
  /**
   * Resumes after a redirect (issue 32): the action at `index` runs its `onContinuePostLogin`, the ones
   * after it their usual handler; `prior` is what the runs before the suspension produced.
   */
  resume?: {
    index: number;
    prior: { commands: ActionCommand[]; results: ActionExecutionResult[] };
    /** After an MFA step the actions asked for: the action at `index` already ran, so nothing runs its `onContinuePostLogin`. */
    fresh?: boolean;
  };
  /** The harness context of every run (the login's redirect state, the trigger's cache). */
  context?: Json;
}

/** The handler a post-login action exports for the request that comes back from its redirect. */
export const CONTINUE_HANDLER = "onContinuePostLogin";

export interface DispatchOutcome {
  execution: ActionExecutionRecord;
  /** Every command of the actions that ran, in order (the denying action's included). */
  commands: ActionCommand[];
  stop?: DispatchStop;
}

const secretsCache = new Map<string, Promise<Record<string, string>>>();

/** Opens a version's sealed secrets (cached per isolate by ciphertext: versions are immutable). */
export function openSecrets(encryptionKey: string | undefined, actionId: string, sealed: string | null): Promise<Record<string, string>> {
  if (!sealed) return Promise.resolve({});
  const key = `${actionId}:${sealed}`;
  let opened = secretsCache.get(key);
  if (!opened) {
    opened = (async () => JSON.parse(await (await fieldCipher(encryptionKey)).decrypt(sealed, encryptionContext.actionSecrets(actionId))) as Record<string, string>)();
    opened.catch(() => secretsCache.delete(key));
    if (secretsCache.size > 1000) secretsCache.clear();
    secretsCache.set(key, opened);
  }
  return opened;
}

/** Seals an action's secrets (name to value) for storage. */
export async function sealSecrets(encryptionKey: string | undefined, actionId: string, secrets: Record<string, string>): Promise<string | null> {
  if (!Object.keys(secrets).length) return null;
  return (await fieldCipher(encryptionKey)).encrypt(JSON.stringify(secrets), encryptionContext.actionSecrets(actionId));
}

function resultOf(bound: Pick<BoundAction, "action_id" | "action_name" | "version_id" | "version_number">, run: ActionRun): ActionExecutionResult {
  return {
    action_name: bound.action_name,
    action_id: bound.action_id,
    version_id: bound.version_id,
    version_number: bound.version_number,
    ...(run.ok ? {} : { error: { id: run.error?.name ?? "ActionError", msg: run.error?.message ?? "The action failed" } }),
    started_at: run.started_at,
    ended_at: run.ended_at,
    duration_ms: run.duration_ms,
    logs: run.logs,
    logs_truncated: false,
    ...(run.egress?.length ? { egress: run.egress } : {}),
  };
}

/**
 * Runs a trigger's bound actions in order (SPEC §6.1), each in its sandbox with `event.secrets` of its own
 * version. A deny ends the flow after the denying action; a throw or a timeout ends it as a failure. The
 * execution record lists each action that ran.
 */
export async function dispatchTrigger(
  env: DispatchEnv,
  triggerId: string,
  bound: readonly BoundAction[],
  event: Record<string, Json>,
  options: DispatchOptions = {},
): Promise<DispatchOutcome> {
  const spec = triggerSpec(triggerId);
  const created = new Date(now()).toISOString();
  const start = options.resume?.index ?? 0;
  const results: ActionExecutionResult[] = [...(options.resume?.prior.results ?? [])];
  const commands: ActionCommand[] = [...(options.resume?.prior.commands ?? [])];
  let stop: DispatchStop | undefined;
  for (const [index, action] of bound.entries()) {
    if (!spec) break;
    if (index < start) continue;
    const handler = options.resume && !options.resume.fresh && index === start ? CONTINUE_HANDLER : spec.handler;
    let run: ActionRun;
    try {
      const secrets = await openSecrets(env.encryptionKey, action.action_id, action.secrets_enc);
      run = await runSandboxed(
        env.loader,
        {
          tenantId: env.tenantId,
          versionId: action.version_id,
          egress: env.egress,
          loadCode: async () => {
            const code = await env.loadCode(action.version_id);
            if (code === null) throw new Error("The action version no longer exists");
            return code;
          },
        },
        { handler, api: spec.id, event: { ...event, secrets }, ...(options.context !== undefined ? { context: options.context } : {}) },
        env.limits,
      );
    } catch (error) {
      const at = new Date(now()).toISOString();
      run = { ok: false, error: { name: "ActionError", message: error instanceof Error ? error.message : String(error) }, commands: [], logs: "", started_at: at, ended_at: at, duration_ms: 0 };
    }
    results.push(resultOf(action, run));
    if (!run.ok) {
      stop = { kind: "failed", action_name: action.action_name, message: run.error?.message ?? "The action failed" };
      break;
    }
    commands.push(...run.commands);
    const deny = run.commands.find((c): c is Extract<ActionCommand, { type: "deny" }> => c.type === "deny");
    if (deny) {
      stop = { kind: "denied", action_name: action.action_name, command: deny };
      break;
    }
    const redirect = run.commands.findLast((c): c is Extract<ActionCommand, { type: "redirect" }> => c.type === "redirect");
    if (redirect) {
      stop = { kind: "redirect", action_name: action.action_name, action_id: action.action_id, index, url: redirect.url };
      break;
    }
    const factor = run.commands.findLast((c): c is Extract<ActionCommand, { type: "authentication" }> => c.type === "authentication");
    if (factor) {
      stop = { kind: "authentication", action_name: action.action_name, action_id: action.action_id, index, op: factor.op, factors: factor.factors };
      break;
    }
  }
  const execution: ActionExecutionRecord = {
    id: randomId("exec_", 24),
    trigger_id: triggerId,
    status: stop?.kind === "failed" ? "partial" : "final",
    results,
    created_at: created,
    updated_at: new Date(now()).toISOString(),
  };
  return { execution, commands, ...(stop ? { stop } : {}) };
}

/**
 * Metadata changes the actions asked for, merged in order (later wins), per the reference's aggregation.
 * Reserved keys were refused with the run (`refuseReservedNames`); Maps keep a `__proto__` that slipped
 * through a plain data key, never a prototype.
 */
export function metadataChanges(commands: readonly ActionCommand[]): { app_metadata: Record<string, Json>; user_metadata: Record<string, Json> } {
  const app = new Map<string, Json>();
  const user = new Map<string, Json>();
  for (const c of commands) {
    if (c.type === "app_metadata" && !isReservedKey(c.name)) app.set(c.name, c.value as Json);
    if (c.type === "user_metadata" && !isReservedKey(c.name)) user.set(c.name, c.value as Json);
  }
  return { app_metadata: Object.fromEntries(app), user_metadata: Object.fromEntries(user) };
}
