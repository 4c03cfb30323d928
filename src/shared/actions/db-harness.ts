import { CONSOLE_CAPTURE } from "./harness";

/**
 * `db-harness.js`, the entrypoint of a custom database script's isolate (issue 32 point 2): the guard and the
 * sandbox's `fetch` are the actions' (`guard.js`, see harness.ts); `script.js` is the tenant's script
 * (instrumented) wrapped in a factory that hands it the reference platform's globals: `configuration` (the
 * connection's opened settings) and the error classes `WrongUsernameOrPasswordError`, `ValidationError`
 * and `UnauthorizedError`. `run({ script, args, configuration, ... })` calls the named function with the
 * arguments and a `callback(error, value)`; the first call settles the run (a second is logged and
 * ignored), a script that never calls back is cut at its deadline. Plain text, never evaluated by the host.
 */
export const DB_HARNESS_MODULE = `
import { WorkerEntrypoint } from "cloudflare:workers";
import { takeControls, ActionTimeout } from "./guard.js";
import * as loaded from "./script.js";

const factory = typeof loaded.default === "function" ? loaded.default : null;

const controls = takeControls();
if (!controls) throw new Error("The script took the sandbox's controls");
const { beginRun, isSpent, runs } = controls;

${CONSOLE_CAPTURE}

class WrongUsernameOrPasswordError extends Error {
  constructor(email, message) { super(message || "Wrong email or password."); this.name = "WrongUsernameOrPasswordError"; this.email = email; }
}
class ValidationError extends Error {
  constructor(code, message) { super(message || code); this.name = "ValidationError"; this.code = code; }
}
class UnauthorizedError extends Error {
  constructor(message) { super(message || "Unauthorized"); this.name = "UnauthorizedError"; }
}

const plain = (value) => {
  if (value === undefined) return null;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? null : JSON.parse(text);
  } catch { return { __unreadable: true }; }
};
const errorOf = (error) => ({
  name: String((error && error.name) || "Error").slice(0, 100),
  message: String((error && error.message) || error).slice(0, 1000),
  ...(error && error.code !== undefined ? { code: String(error.code).slice(0, 100) } : {}),
});

export default class DatabaseScript extends WorkerEntrypoint {
  async run(request) {
    if (runs.getStore()) throw new Error("A run cannot start another");
    beginRun(request.timeoutMs, request.stepBudget);
    const run = { commands: [], logs: "", closed: false, egress: [], egressMax: request.egressMax ?? 0 };
    let timer;
    try {
      const settled = await runs.run(run, () => new Promise((resolve, reject) => {
        let called = false;
        const callback = (error, value) => {
          if (called) {
            if (run.logs.length < LOG_CAP) run.logs += "callback was called more than once; later calls are ignored\\n";
            return;
          }
          called = true;
          resolve({ error, value });
        };
        timer = setTimeout(() => reject(new ActionTimeout()), request.timeoutMs);
        try {
          const fn = factory && factory(Object.freeze({ ...request.configuration }), WrongUsernameOrPasswordError, ValidationError, UnauthorizedError);
          if (typeof fn !== "function") throw new Error("The script does not define function " + request.script);
          Promise.resolve(fn(...request.args, callback)).then(undefined, reject);
        } catch (error) {
          reject(error);
        }
      }));
      return settled.error
        ? { ok: false, error: errorOf(settled.error), logs: run.logs, egress: run.egress }
        : { ok: true, value: plain(settled.value), logs: run.logs, egress: run.egress };
    } catch (error) {
      const timeout = error instanceof ActionTimeout || isSpent();
      const failure = timeout ? { name: "ScriptTimeout", message: "Script execution timed out" } : errorOf(error);
      return { ok: false, thrown: true, error: failure, logs: run.logs, egress: run.egress };
    } finally {
      clearTimeout(timer);
      run.closed = true;
    }
  }
}
`;

/** The names the factory hands the script; the script's text sits between these two parts. */
export const scriptFactory = (instrumented: string, name: string): string =>
  `module.exports = function (configuration, WrongUsernameOrPasswordError, ValidationError, UnauthorizedError) {\n${instrumented}\n;return typeof ${name} === "function" ? ${name} : null;\n};\n`;
