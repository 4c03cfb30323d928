import { EGRESS_HEADERS } from "./egress";
import { GUARD } from "./instrument";
import { POST_LOGIN_API } from "./harness-post-login";
import { ALLOWED_MODULES } from "./module-access";

/**
 * The code of the sandbox isolate besides the tenant's module (`action.js`, CommonJS, instrumented). It is
 * plain text handed to the Worker Loader, never evaluated by the host. Bumping HARNESS_VERSION changes every
 * loader id, so no isolate keeps an older harness.
 */
export const HARNESS_VERSION = "h7";

/**
 * `guard.js`, evaluated before the tenant module (ES module imports run in order): defines the step guard as
 * a non-writable, non-configurable global. Every loop, function and catch of the tenant code calls it; past
 * the run's deadline or step budget it throws, and keeps throwing, so the code unwinds. Module top-level code
 * gets a startup budget.
 *
 * The registry of the isolate is open to every module in it, so the guard exports nothing that restarts the
 * deadline (issue 25 finding 2): the controls are handed out once, to the first caller, which is the harness
 * (its body runs right after the tenant module, and the tenant module cannot load this one: the deploy check
 * refuses it, and `process.getBuiltinModule` is narrowed here, before tenant code runs, to the allowed
 * built-ins, so `createRequire` cannot reach it either). If tenant code ever took the controls first, the
 * harness refuses to start and every run fails closed.
 */
const guardModule = (allowedModules: readonly string[], mark: string) => `
import { AsyncLocalStorage } from "node:async_hooks";
// Captured before tenant code runs: replacing Date.now later cannot stop the clock of the guard.
const clock = Date.now;
let deadline = clock() + 2000;
let budget = 50000000;
let steps = 0;
let spent = false;
export class ActionTimeout extends Error {
  constructor() { super("Action execution timed out"); this.name = "ActionTimeout"; }
}
function step() {
  if (spent) throw new ActionTimeout();
  if ((++steps & 1023) === 0 && (steps > budget || clock() > deadline)) {
    spent = true;
    throw new ActionTimeout();
  }
}
Object.defineProperty(globalThis, ${JSON.stringify(GUARD)}, { value: step, writable: false, configurable: false, enumerable: false });
// No code from strings (review of issue 25 finding 2): workerd lets module top-level code call eval and the
// Function constructors, and a function made that way was never instrumented, so it would run unguarded.
const noCodeFromStrings = function () { throw new EvalError("Actions cannot create code from strings (eval, Function)"); };
Object.defineProperty(noCodeFromStrings, "prototype", { value: Function.prototype });
Object.defineProperty(globalThis, "eval", { value: noCodeFromStrings, writable: false, configurable: false, enumerable: false });
for (const F of [Function, (async function () {}).constructor, (function* () {}).constructor, (async function* () {}).constructor]) {
  Object.defineProperty(F.prototype, "constructor", { value: noCodeFromStrings, writable: false, configurable: false, enumerable: false });
}
Object.defineProperty(globalThis, "Function", { value: noCodeFromStrings, writable: false, configurable: false, enumerable: false });
const allowed = new Set(${JSON.stringify(allowedModules)});
const proc = globalThis.process;
if (proc && typeof proc.getBuiltinModule === "function") {
  const load = proc.getBuiltinModule.bind(proc);
  const narrowed = (id) => {
    if (!allowed.has(String(id))) throw new Error("Only these built-in modules can be loaded: " + [...allowed].join(", "));
    return load(id);
  };
  Object.defineProperty(proc, "getBuiltinModule", { value: narrowed, writable: false, configurable: false, enumerable: false });
}
// The run each call belongs to (console output, outbound calls); handed to the harness with the controls.
const runs = new AsyncLocalStorage();
${egressFetch(mark)}
let taken = false;
export function takeControls() {
  if (taken) return null;
  taken = true;
  return {
    beginRun(timeoutMs, stepBudget) {
      deadline = clock() + timeoutMs;
      budget = stepBudget;
      steps = 0;
      spent = false;
    },
    isSpent() { return spent; },
    runs,
  };
}
`;

/**
 * The sandbox's `fetch` (issue 32 point 1), installed by the guard before tenant code runs, as a
 * non-writable global: it counts the run's requests (the per-execution cap), stamps each with the isolate's
 * mark (the gateway refuses anything without it, so a raw WebSocket or socket gets nowhere), turns the
 * gateway's refusals into a thrown TypeError, and records every call (method, host, status, duration, bytes)
 * in the run. The original `fetch` stays in this closure.
 */
const egressFetch = (mark: string) => `
const rawFetch = globalThis.fetch;
// Captured before tenant code runs: a tenant that replaces Request, Headers or their methods later can
// neither read the mark nor change what this fetch sends.
const { Request: Req, Response: Res, Headers: Hdr } = globalThis;
const hset = Hdr.prototype.set, hget = Hdr.prototype.get, hdelete = Hdr.prototype.delete;
const MARK = ${JSON.stringify(mark)};
const H = ${JSON.stringify(EGRESS_HEADERS)};
const note = (run, call) => {
  run.egress.push(call);
  const what = call.error ? "refused: " + call.error : call.status + " " + call.duration_ms + "ms " + call.bytes + "B";
  if (run.logs.length < 4096) run.logs += "egress " + call.method + " " + call.host + " " + what + "\\n";
};
async function fetch(input, init) {
  const run = runs.getStore();
  if (!run || run.closed) throw new TypeError("fetch can only be used while the code runs");
  const request = new Req(input, init);
  const method = request.method;
  let host = "";
  try { host = new URL(request.url).host; } catch {}
  if (run.egress.length >= run.egressMax) {
    const message = "Refused by the egress policy: at most " + run.egressMax + " outbound requests per execution";
    note(run, { method, host, status: null, duration_ms: 0, bytes: 0, error: message });
    throw new TypeError(message);
  }
  const headers = new Hdr(request.headers);
  hset.call(headers, H.mark, MARK);
  const started = clock();
  let response;
  try {
    response = await rawFetch(new Req(request, { headers }));
  } catch (error) {
    const message = String((error && error.message) || error).slice(0, 300);
    note(run, { method, host, status: null, duration_ms: clock() - started, bytes: 0, error: message });
    throw error;
  }
  const refused = hget.call(response.headers, H.refused);
  if (refused) {
    note(run, { method, host, status: null, duration_ms: clock() - started, bytes: 0, error: refused });
    throw new TypeError(refused);
  }
  const out = new Hdr(response.headers);
  const bytes = Number(hget.call(out, H.bytes)) || 0;
  const duration = Number(hget.call(out, H.duration));
  for (const name of [H.mark, H.refused, H.bytes, H.duration]) hdelete.call(out, name);
  note(run, { method, host, status: response.status, duration_ms: Number.isFinite(duration) ? duration : clock() - started, bytes });
  return new Res(response.body, { status: response.status, statusText: response.statusText, headers: out });
}
Object.defineProperty(globalThis, "fetch", { value: fetch, writable: false, configurable: false, enumerable: false });
`;

/**
 * Module text shared by both sandbox entrypoints (actions' harness.js, custom database scripts' db-harness.js):
 * `console.*` appends to the current run's logs (per-run store `runs`), at most LOG_CAP characters.
 */
export const CONSOLE_CAPTURE = `const LOG_CAP = 4096;
const show = (value) => {
  if (typeof value === "string") return value;
  try { return JSON.stringify(value) ?? String(value); } catch { return String(value); }
};
for (const level of ["log", "info", "warn", "error", "debug", "trace"]) {
  console[level] = (...args) => {
    const run = runs.getStore();
    if (!run || run.logs.length >= LOG_CAP) return;
    run.logs += args.map(show).join(" ").slice(0, LOG_CAP) + "\\n";
  };
}`;

/**
 * `harness.js`, the entrypoint: `run({ handler, api, event, timeoutMs, stepBudget })` calls the tenant's
 * handler with the event and an \`api\` object that only records commands, and returns
 * `{ ok, error?, commands, logs }` as plain data. The host validates everything it gets back.
 */
const HARNESS_MODULE = `
import { WorkerEntrypoint } from "cloudflare:workers";
import { takeControls, ActionTimeout } from "./guard.js";
import * as loaded from "./action.js";
${POST_LOGIN_API}

const controls = takeControls();
if (!controls) throw new Error("The action took the sandbox's controls");
const { beginRun, isSpent, runs } = controls;

${CONSOLE_CAPTURE}

const plain = (value) => {
  if (value === undefined) return null;
  const text = JSON.stringify(value);
  return text === undefined ? null : JSON.parse(text);
};
const text = (value) => (value === undefined || value === null ? null : String(value));

function buildApi(kind, run, ctx, event) {
  const push = (command) => {
    if (run.closed) throw new Error("The api object cannot be used after the action returned");
    run.commands.push(command);
  };
  const api = {};
  const claims = (target) => ({
    setCustomClaim(name, value) { push({ type: "claim", target, name: String(name), value: plain(value) }); return api; },
  });
  const user = {
    setAppMetadata(name, value) { push({ type: "app_metadata", name: String(name), value: plain(value) ?? null }); return api; },
    setUserMetadata(name, value) { push({ type: "user_metadata", name: String(name), value: plain(value) ?? null }); return api; },
  };
  const unsupported = (what) => () => { throw new Error(what + " is not supported by this service"); };
  if (kind === "post-login") {
    api.access = { deny(reason) { push({ type: "deny", reason: text(reason) }); return api; } };
    api.idToken = claims("id_token");
    api.accessToken = {
      ...claims("access_token"),
      addScope(scope) { push({ type: "scope", op: "add", scope: String(scope) }); return api; },
      removeScope(scope) { push({ type: "scope", op: "remove", scope: String(scope) }); return api; },
    };
    api.user = user;
    // What the request said, copied before the handler can change the event (validateToken reads it).
    const req = (event && event.request) || {};
    const said = { query: plain(req.query) || {}, body: plain(req.body) || {} };
    api.redirect = redirectApi(push, ctx, said);
    api.cache = cacheApi(push, ctx);
    api.session = { revoke(reason) { push({ type: "revoke_session", reason: text(reason) }); return api; } };
    api.refreshToken = refreshTokenApi(push, api, event);
    api.multifactor = multifactorApi(push, api);
    api.authentication = { ...authenticationApi(push, api), recordMethod: unsupported("api.authentication.recordMethod") };
  } else if (kind === "credentials-exchange") {
    api.access = { deny(code, reason) { push({ type: "deny", code: text(code), reason: text(reason) }); return api; } };
    api.accessToken = claims("access_token");
  } else if (kind === "pre-user-registration") {
    api.access = { deny(reason, userMessage) { push({ type: "deny", reason: text(reason), user_message: text(userMessage) }); return api; } };
    api.user = user;
  }
  return api;
}

const handlerOf = (name) => {
  const direct = loaded[name];
  if (typeof direct === "function") return direct;
  const viaDefault = loaded.default && loaded.default[name];
  return typeof viaDefault === "function" ? viaDefault : null;
};

export default class Sandbox extends WorkerEntrypoint {
  async run(request) {
    // Called from inside a run, this is tenant code that reached the harness: it gets no fresh deadline.
    if (runs.getStore()) throw new Error("A run cannot start another");
    beginRun(request.timeoutMs, request.stepBudget);
    const run = { commands: [], logs: "", closed: false, egress: [], egressMax: request.egressMax ?? 0 };
    try {
      const handler = handlerOf(request.handler);
      if (!handler) return { ok: true, missing: true, commands: [], logs: "", egress: [] };
      const api = buildApi(request.api, run, request.context || {}, request.event);
      await runs.run(run, () => handler(request.event, api));
      return { ok: true, commands: run.commands, logs: run.logs, egress: run.egress };
    } catch (error) {
      const timeout = error instanceof ActionTimeout || isSpent();
      const message = timeout ? "Action execution timed out" : String((error && error.message) || error).slice(0, 1000);
      return { ok: false, error: { name: timeout ? "ActionTimeout" : String((error && error.name) || "Error"), message }, commands: run.commands, logs: run.logs, egress: run.egress };
    } finally {
      run.closed = true;
    }
  }
}
`;

/** The modules of a sandbox isolate: the harness, the guard and the tenant's instrumented CommonJS module. */
export function sandboxModules(compiledAction: string, mark: string): Record<string, string | { cjs: string }> {
  return { "harness.js": HARNESS_MODULE, "guard.js": guardModule([...ALLOWED_MODULES], mark), "action.js": { cjs: compiledAction } };
}
