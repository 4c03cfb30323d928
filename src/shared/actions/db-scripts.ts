import { parse } from "acorn";
import { z } from "zod";
import { sha256 } from "../crypto/compare";
import { toBase64Url } from "../crypto/encoding";
import { randomToken } from "../crypto/random";
import type { Json } from "../types";
import { DB_HARNESS_MODULE, scriptFactory } from "./db-harness";
import type { EgressCall } from "./egress";
import { HARNESS_VERSION, sandboxModules } from "./harness";
import { instrumentAction } from "./instrument";
import { egressIdentity, HOST_GRACE_MS, type SandboxEgress, type SandboxLimits } from "./sandbox";

/**
 * Custom database scripts (issue 32 point 2): the reference platform's seven scripts of a database
 * connection with `enabledDatabaseCustomization`, each with its conventional function and callback
 * signature. A script is one function; the runner calls it by the conventional name, or the only top-level
 * function of the script under another name.
 */
export const DB_SCRIPTS = {
  login: { fn: "login", signature: "function login(email, password, callback)" },
  get_user: { fn: "getByEmail", signature: "function getByEmail(email, callback)" },
  create: { fn: "create", signature: "function create(user, callback)" },
  verify: { fn: "verify", signature: "function verify(email, callback)" },
  change_password: { fn: "changePassword", signature: "function changePassword(email, newPassword, callback)" },
  delete: { fn: "remove", signature: "function remove(id, callback)" },
  change_email: { fn: "changeEmail", signature: "function changeEmail(email, newEmail, verified, callback)" },
} as const;
export type ScriptName = keyof typeof DB_SCRIPTS;
export const SCRIPT_NAMES = Object.keys(DB_SCRIPTS) as ScriptName[];

/** The same 100 KB as an action's code (the reference platform's limit). */
const MAX_SCRIPT_CHARS = 102_400;

/** The function a script defines for `name`: the conventional one, else the only top-level function. */
function scriptFunction(name: ScriptName, source: string): string | null {
  const ast = parse(source, { ecmaVersion: "latest", sourceType: "script", allowReturnOutsideFunction: true }) as unknown as {
    body: { type: string; id?: { name: string } | null }[];
  };
  const names = ast.body.filter((n) => n.type === "FunctionDeclaration" && n.id).map((n) => n.id?.name as string);
  if (names.includes(DB_SCRIPTS[name].fn)) return DB_SCRIPTS[name].fn;
  return names.length === 1 ? (names[0] as string) : null;
}

/** A script ready for the sandbox (`script.js`), or why it cannot run. */
export function compileScript(name: ScriptName, source: string): { ok: true; code: string } | { ok: false; message: string } {
  const instrumented = instrumentAction(source);
  // acorn's message names the line and column (`Unexpected token (1:43)`).
  if (!instrumented.ok) return { ok: false, message: `customScripts.${name}: ${instrumented.message}` };
  const fn = scriptFunction(name, source);
  if (!fn) return { ok: false, message: `customScripts.${name} must define one function, such as ${DB_SCRIPTS[name].signature}` };
  return { ok: true, code: scriptFactory(instrumented.code, fn) };
}

const script = z.string({ message: "each of customScripts is a script (a string)" }).min(1).max(MAX_SCRIPT_CHARS, "a script must be at most 100 KB");
const scripts = Object.fromEntries(SCRIPT_NAMES.map((n) => [n, script.optional()])) as Record<ScriptName, z.ZodOptional<typeof script>>;
const customOptions = z.looseObject({
  enabledDatabaseCustomization: z.boolean({ message: "enabledDatabaseCustomization must be a boolean" }).optional(),
  import_mode: z.boolean({ message: "import_mode must be a boolean" }).optional(),
  customScripts: z.strictObject(scripts, { message: `customScripts takes the scripts ${SCRIPT_NAMES.join(", ")}` }).optional(),
  configuration: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "configuration keys are letters, digits and underscores"), z.string().max(4096))
    .refine((c) => Object.keys(c).length <= 100, "configuration holds at most 100 settings")
    .optional(),
});

/**
 * Why a database connection's options cannot be saved (400), or null: the types of the custom database
 * options, each script compiled (a syntax error names its line), `login` present when customization is on
 * and `get_user` too in import mode (the reference platform's requirements).
 */
export function customDatabaseRefusal(strategy: string, options: Record<string, unknown>): string | null {
  const touched = ["enabledDatabaseCustomization", "import_mode", "customScripts", "configuration"].some((k) => options[k] !== undefined);
  if (!touched) return null;
  if (strategy !== "auth0") return "enabledDatabaseCustomization, customScripts, import_mode and configuration apply to database connections (strategy auth0) only";
  const parsed = customOptions.safeParse(options);
  if (!parsed.success) return parsed.error.issues[0]?.message ?? "invalid custom database options";
  const { enabledDatabaseCustomization, import_mode, customScripts = {} } = parsed.data;
  for (const [name, source] of Object.entries(customScripts) as [ScriptName, string][]) {
    const compiled = compileScript(name, source);
    if (!compiled.ok) return compiled.message;
  }
  if (enabledDatabaseCustomization && !customScripts.login) return "customScripts.login is required when enabledDatabaseCustomization is true";
  if (enabledDatabaseCustomization && import_mode && !customScripts.get_user) return "customScripts.get_user is required in import mode";
  // Without import mode a sign-up's profile (its user_id) is read back through get_user.
  if (enabledDatabaseCustomization && !import_mode && customScripts.create && !customScripts.get_user) return "customScripts.get_user is required with create";
  return null;
}

/** A connection's custom database, when it has one on. */
export interface CustomDatabase {
  connectionId: string;
  importMode: boolean;
  scripts: Partial<Record<ScriptName, string>>;
}

export function customDatabaseOf(connection: { id: string; strategy: string; options: Record<string, Json> }): CustomDatabase | null {
  const { options } = connection;
  if (connection.strategy !== "auth0" || options.enabledDatabaseCustomization !== true) return null;
  const list = options.customScripts;
  if (!list || typeof list !== "object" || Array.isArray(list)) return null;
  return { connectionId: connection.id, importMode: options.import_mode === true, scripts: list as Partial<Record<ScriptName, string>> };
}

/** How a script run ended, in the reference platform's terms. */
export type ScriptOutcome = (
  | { ok: true; value: Json | null }
  | { ok: false; kind: "wrong_credentials" | "validation" | "unauthorized" | "error" | "timeout"; message: string; code?: string }
) & { logs: string; egress: EgressCall[]; duration_ms: number };

export interface ScriptEnv {
  loader: WorkerLoader;
  tenantId: string;
  limits: SandboxLimits;
  egress?: SandboxEgress | undefined;
}

const answer = z.object({
  ok: z.boolean(),
  thrown: z.boolean().optional(),
  value: z.json().optional(),
  error: z.object({ name: z.string(), message: z.string(), code: z.string().optional() }).optional(),
  logs: z.string(),
  egress: z.array(z.object({ method: z.string(), host: z.string(), status: z.number().nullable(), duration_ms: z.number(), bytes: z.number(), error: z.string().optional() })).max(1000),
});

/**
 * Runs one script of a custom database in its own Worker Loader isolate (the actions' sandbox: guard, step
 * budget, egress gateway), with `configuration` and the arguments. Never throws: a throw, a timeout, a
 * script that never calls back or an unreadable answer is an `error` / `timeout` outcome.
 */
export async function runScript(env: ScriptEnv, db: CustomDatabase, name: ScriptName, args: Json[], configuration: Record<string, string>): Promise<ScriptOutcome> {
  const t0 = performance.now();
  const elapsed = () => Math.max(0, Math.round(performance.now() - t0));
  const fail = (kind: "error" | "timeout", message: string): ScriptOutcome => ({ ok: false, kind, message, logs: "", egress: [], duration_ms: elapsed() });
  const source = db.scripts[name];
  if (!source) return fail("error", `The connection has no ${name} script`);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const digest = toBase64Url(await sha256(source)).slice(0, 22);
    const egressId = env.egress ? await egressIdentity(env.egress.allowlist) : "offline";
    const id = `dbscript:${HARNESS_VERSION}:${env.tenantId}:${db.connectionId}:${name}:${digest}:${egressId}`;
    const worker = env.loader.get(id, async () => {
      const compiled = compileScript(name, source);
      if (!compiled.ok) throw new Error(compiled.message);
      const mark = randomToken(24);
      const { "harness.js": _actions, "action.js": _code, ...shared } = sandboxModules("", mark);
      return {
        compatibilityDate: "2026-08-01",
        compatibilityFlags: ["nodejs_compat"],
        mainModule: "db-harness.js",
        modules: { ...shared, "db-harness.js": DB_HARNESS_MODULE, "script.js": { cjs: compiled.code } },
        env: {},
        globalOutbound: env.egress ? env.egress.gateway({ tenantId: env.tenantId, mark, allowlist: env.egress.allowlist }) : null,
        limits: { cpuMs: env.limits.cpuMs },
      };
    });
    const entry = worker.getEntrypoint() as unknown as { run(input: unknown): Promise<unknown> };
    const hostTimeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), env.limits.timeoutMs + HOST_GRACE_MS);
    });
    const raw = await Promise.race([
      entry.run({ script: name, args, configuration, timeoutMs: env.limits.timeoutMs, stepBudget: env.limits.stepBudget, egressMax: env.egress?.maxRequests ?? 0 }),
      hostTimeout,
    ]);
    if (raw === "timeout") return fail("timeout", "Script execution timed out");
    const parsed = answer.safeParse(raw);
    if (!parsed.success) return fail("error", "The script returned an unreadable result");
    const { ok, thrown, value, error, logs, egress } = parsed.data;
    const base = { logs, egress, duration_ms: elapsed() };
    if (ok) return { ok: true, value: (value ?? null) as Json | null, ...base };
    const message = error?.message ?? "The script failed";
    if (error?.name === "ScriptTimeout") return { ok: false, kind: "timeout", message, ...base };
    if (thrown) return { ok: false, kind: "error", message, ...base };
    const kind = error?.name === "WrongUsernameOrPasswordError" ? "wrong_credentials" : error?.name === "ValidationError" ? "validation" : error?.name === "UnauthorizedError" ? "unauthorized" : "error";
    return { ok: false, kind, message, ...(error?.code !== undefined ? { code: error.code } : {}), ...base };
  } catch (error) {
    return fail("error", (error instanceof Error ? error.message : String(error)).slice(0, 1000));
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

