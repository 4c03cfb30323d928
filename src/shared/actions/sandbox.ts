import { z } from "zod";
import { now } from "../clock";
import { isReservedKey, reservedKeyIn } from "../object-keys";
import type { Json } from "../types";
import { sha256 } from "../crypto/compare";
import { toBase64Url } from "../crypto/encoding";
import { randomToken } from "../crypto/random";
import { type EgressCall, type EgressProps, egressLimitsFrom } from "./egress";
import { HARNESS_VERSION, sandboxModules } from "./harness";
import { ACTION_FACTORS, MAX_REDIRECT_URL_LENGTH, MFA_PROVIDERS } from "./harness-post-login";

/** Sandbox limits (docs/actions.md): a wall-clock timeout guarded inside the isolate, and CPU in production. */
export interface SandboxLimits {
  /** Wall-clock bound of one action run. @default 5000 */
  timeoutMs: number;
  /** Guard steps (loop iterations, calls) one run may take, a backstop where the clock stands still. @default 200000000 */
  stepBudget: number;
  /** `limits.cpuMs` of the isolate (enforced by the production runtime only). @default 5000 */
  cpuMs: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { timeoutMs: 5000, stepBudget: 200_000_000, cpuMs: 5000 };

/** Reads ACTIONS_TIMEOUT_MS, ACTIONS_STEP_BUDGET and ACTIONS_CPU_MS; anything unset keeps its default. */
export function sandboxLimitsFrom(vars: Record<string, unknown>): SandboxLimits {
  const read = (name: string, fallback: number) => {
    const value = Number(vars[name]);
    return vars[name] !== undefined && vars[name] !== "" && Number.isFinite(value) && value > 0 ? value : fallback;
  };
  return {
    timeoutMs: read("ACTIONS_TIMEOUT_MS", DEFAULT_SANDBOX_LIMITS.timeoutMs),
    stepBudget: read("ACTIONS_STEP_BUDGET", DEFAULT_SANDBOX_LIMITS.stepBudget),
    cpuMs: read("ACTIONS_CPU_MS", DEFAULT_SANDBOX_LIMITS.cpuMs),
  };
}

/** What tenant code asked for through the `api` object; validated here because it comes from the isolate. */
const command = z.discriminatedUnion("type", [
  z.object({ type: z.literal("claim"), target: z.enum(["id_token", "access_token"]), name: z.string().max(1024), value: z.json() }),
  z.object({ type: z.literal("app_metadata"), name: z.string().max(1024), value: z.json() }),
  z.object({ type: z.literal("user_metadata"), name: z.string().max(1024), value: z.json() }),
  z.object({ type: z.literal("deny"), reason: z.string().nullable(), code: z.string().nullable().optional(), user_message: z.string().nullable().optional() }),
  // Issue 32 point 3: the rest of the post-login api (the host checks the URL and the cache bounds again).
  z.object({ type: z.literal("redirect"), url: z.string().max(MAX_REDIRECT_URL_LENGTH) }),
  z.object({ type: z.literal("scope"), op: z.enum(["add", "remove"]), scope: z.string().min(1).max(256) }),
  z.object({ type: z.literal("cache"), op: z.enum(["set", "delete"]), key: z.string().max(256), value: z.string().max(8192).optional(), expires_at: z.number().optional() }),
  z.object({ type: z.literal("revoke_session"), reason: z.string().nullable() }),
  z.object({ type: z.literal("revoke_refresh_token"), reason: z.string().nullable() }),
  // api.multifactor.enable: MFA at the end of the pipeline (provider narrows the factors).
  z.object({ type: z.literal("mfa"), provider: z.enum(MFA_PROVIDERS), allow_remember_browser: z.boolean() }),
  // api.authentication.challengeWith(Any) / enrollWith(Any): the pipeline waits for the factor (issue 32 point 3).
  z.object({ type: z.literal("authentication"), op: z.enum(["challenge", "enroll"]), factors: z.array(z.enum(ACTION_FACTORS)).min(1).max(8) }),
]);
export type ActionCommand = z.infer<typeof command>;

const egressCall = z.object({
  method: z.string().max(32),
  host: z.string().max(300),
  status: z.number().int().nullable(),
  duration_ms: z.number(),
  bytes: z.number(),
  error: z.string().max(1000).optional(),
});

const sandboxAnswer = z.object({
  ok: z.boolean(),
  missing: z.boolean().optional(),
  error: z.object({ name: z.string(), message: z.string() }).optional(),
  commands: z.array(command).max(10_000),
  logs: z.string(),
  egress: z.array(egressCall).max(1000).optional(),
});

/** The `api` call of each command type, as the execution log names it. */
const CALLS: Record<string, (target: unknown) => string> = {
  claim: (target) => (target === "id_token" ? "api.idToken.setCustomClaim" : "api.accessToken.setCustomClaim"),
  app_metadata: () => "api.user.setAppMetadata",
  user_metadata: () => "api.user.setUserMetadata",
};

/**
 * Drops the commands that name a claim or a metadata key `__proto__`, `constructor` or `prototype`, or carry
 * one in their value (issue 25 findings 3, 4): parsing would turn them into prototypes, which then read as
 * protected claims and fail to cross RPC (`DataCloneError`, a 500 for every login of the tenant). Runs before
 * the answer is parsed, on what the isolate sent; each refusal is one line of the execution log, written
 * first so the log's cut keeps it. The run itself goes on.
 */
export function refuseReservedNames(answer: unknown): unknown {
  if (answer === null || typeof answer !== "object" || !Array.isArray((answer as { commands?: unknown }).commands)) return answer;
  const { commands, logs } = answer as { commands: unknown[]; logs?: unknown };
  const refusals: string[] = [];
  const kept = commands.filter((raw) => {
    const c = raw as { type?: unknown; target?: unknown; name?: unknown; value?: unknown } | null;
    const call = typeof c?.type === "string" && Object.hasOwn(CALLS, c.type) ? CALLS[c.type] : undefined;
    if (!c || !call) return true;
    const why = typeof c.name === "string" && isReservedKey(c.name) ? "reserved name" : reservedKeyIn(c.value) && `reserved key "${reservedKeyIn(c.value)}" in the value`;
    if (!why) return true;
    refusals.push(`${call(c.target)}(${JSON.stringify(String(c.name))}) was refused: ${why}\n`);
    return false;
  });
  if (!refusals.length) return answer;
  return { ...answer, commands: kept, logs: refusals.join("") + (typeof logs === "string" ? logs : "") };
}

/** One action run as the host sees it. */
export interface ActionRun {
  ok: boolean;
  /** The module does not export the trigger's handler (nothing ran). */
  missing?: boolean;
  error?: { name: string; message: string };
  commands: ActionCommand[];
  logs: string;
  /** The run's outbound calls through the egress gateway, refused ones included. */
  egress?: EgressCall[];
  started_at: string;
  ended_at: string;
  duration_ms: number;
}

export interface SandboxTarget {
  tenantId: string;
  versionId: string;
  /** The instrumented module, fetched only when the loader has no isolate for this id yet. */
  loadCode: () => Promise<string>;
  /** Where the isolate's `fetch` goes: the egress gateway with these props; absent: no network at all. */
  egress?: SandboxEgress | undefined;
}

/** The egress gateway of a sandbox (issue 32 point 1): the host's entrypoint and what it applies. */
export interface SandboxEgress {
  gateway: (props: EgressProps) => Fetcher;
  /** The tenant's allowlist (null: any host the policy allows); part of the isolate's identity. */
  allowlist: string[] | null;
  /** Outbound requests per run. */
  maxRequests: number;
}

export interface SandboxRequest {
  handler: string;
  /** Which `api` object the harness builds (the trigger id). */
  api: string;
  event: Json;
  /** What the harness needs besides the event (the login's redirect state, the trigger's cache). */
  context?: Json;
}

/** A short digest of an allowlist, for the loader id (the same list, the same isolate). */
export async function egressIdentity(allowlist: string[] | null): Promise<string> {
  if (!allowlist) return "any";
  return toBase64Url(await sha256(JSON.stringify([...allowlist].sort()))).slice(0, 16);
}

/** Extra time the host waits beyond the in-isolate deadline before it gives up on an answer. */
export const HOST_GRACE_MS = 1000;

/**
 * Runs one action version in its own Worker Loader isolate (PLATFORM.md): no network
 * (`globalOutbound: null`), no bindings, the event and a narrow `api` passed in, the loader id carrying the
 * version so a cached isolate never serves other code. A throw, a timeout or a malformed answer is a failed
 * run, never an exception for the caller.
 */
export async function runSandboxed(loader: WorkerLoader, target: SandboxTarget, request: SandboxRequest, limits: SandboxLimits): Promise<ActionRun> {
  const startedAt = now();
  const t0 = performance.now();
  const finish = (partial: Omit<ActionRun, "started_at" | "ended_at" | "duration_ms">): ActionRun => ({
    ...partial,
    started_at: new Date(startedAt).toISOString(),
    ended_at: new Date(now()).toISOString(),
    duration_ms: Math.max(0, Math.round(performance.now() - t0)),
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const egress = target.egress;
    // The allowlist is fixed in the isolate's gateway props, so a changed list is another isolate.
    const egressId = egress ? `:${await egressIdentity(egress.allowlist)}` : ":offline";
    const worker = loader.get(`action:${HARNESS_VERSION}:${target.tenantId}:${target.versionId}${egressId}`, async () => {
      const mark = randomToken(24);
      return {
        compatibilityDate: "2026-08-01",
        compatibilityFlags: ["nodejs_compat"],
        mainModule: "harness.js",
        modules: sandboxModules(await target.loadCode(), mark),
        env: {},
        globalOutbound: egress ? egress.gateway({ tenantId: target.tenantId, mark, allowlist: egress.allowlist }) : null,
        limits: { cpuMs: limits.cpuMs },
      };
    });
    const entry = worker.getEntrypoint() as unknown as { run(input: unknown): Promise<unknown> };
    const hostTimeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), limits.timeoutMs + HOST_GRACE_MS);
    });
    const answer = await Promise.race([
      entry.run({
        handler: request.handler,
        api: request.api,
        event: request.event,
        context: request.context ?? {},
        timeoutMs: limits.timeoutMs,
        stepBudget: limits.stepBudget,
        egressMax: egress?.maxRequests ?? 0,
      }),
      hostTimeout,
    ]);
    if (answer === "timeout") return finish({ ok: false, error: { name: "ActionTimeout", message: "Action execution timed out" }, commands: [], logs: "" });
    const parsed = sandboxAnswer.safeParse(refuseReservedNames(answer));
    if (!parsed.success) return finish({ ok: false, error: { name: "ActionError", message: "The action returned an unreadable result" }, commands: [], logs: "" });
    const { ok, missing, error, commands, logs, egress: calls } = parsed.data;
    return finish({
      ok,
      ...(missing ? { missing } : {}),
      ...(error ? { error } : {}),
      commands: ok ? commands : commands.filter((c) => c.type !== "deny"),
      logs,
      ...(calls?.length ? { egress: calls.map(({ error: e, ...call }) => (e === undefined ? call : { ...call, error: e })) } : {}),
    });
  } catch (error) {
    // The isolate failed to start (syntax the parser accepted but the runtime refused, a missing module).
    const message = error instanceof Error ? error.message.replace(/^Error: /, "") : String(error);
    return finish({ ok: false, error: { name: "ActionError", message: message.slice(0, 1000) }, commands: [], logs: "" });
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/**
 * The egress of sandboxes run from a context whose `exports` (ctx.exports: loopback bindings to this
 * worker's entrypoints) hold the `EgressGateway` entrypoint; none: the code runs without network. The
 * per-request timeout never outlasts the run itself, so a slow server is cut with a log line the run keeps.
 */
export function sandboxEgressFrom(exports: unknown, vars: Record<string, unknown>, allowlist: unknown): SandboxEgress | undefined {
  const gateway = (exports as { EgressGateway?: (options: { props: EgressProps }) => Fetcher } | undefined)?.EgressGateway;
  if (typeof gateway !== "function") return undefined;
  const list = Array.isArray(allowlist) ? allowlist.filter((h): h is string => typeof h === "string") : null;
  return { gateway: (props) => gateway({ props }), allowlist: list, maxRequests: egressLimitsFrom(vars).maxRequests };
}
