import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { childEnv, freePort, nodeBinary, ROOT } from "../../../scripts/e2e-server.mjs";

/**
 * Runs the real `npm start` script (scripts/start.mjs) as a user would, on a free port, with its `.dev.vars`
 * and `.wrangler/` in a throwaway GATEHOUSE_LOCAL_DIR so neither the checkout nor a running `npm start` is
 * touched. Ready when the banner has been printed in full.
 */
export interface StartedScript {
  port: number;
  /** The throwaway directory holding `.dev.vars` and `.wrangler/`. */
  localDir: string;
  /** Everything the script printed so far (stdout and stderr). */
  output(): string;
  /** The banner's line that follows `heading` (trimmed), e.g. the curl after "Get a management token:". */
  lineAfter(heading: string): string;
  /** The value printed after `label` on a banner line (`Issuer:` -> `http://localhost:PORT/`). */
  field(label: string): string;
  /** Milliseconds from spawn to the complete banner. */
  readyMs: number;
  /** Stops the script's process group; deletes the directory unless asked to keep it (or the caller owns it). */
  stop(options?: { keepLocalDir?: boolean }): Promise<void>;
}

/** A restart on the same data: the directory and port of an earlier start (the caller then owns the directory). */
export interface StartOptions {
  port?: number;
  localDir?: string;
}

/** @default 220000: first start compiles the worker and runs every migration; `--dispatcher` builds a release. */
const READY_TIMEOUT_MS = 220_000;
const BANNER_END = /Stop with Ctrl-C\.\n=+\n/;

function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const pid = child.pid;
  process.kill(-pid, "SIGTERM");
  const timer = setTimeout(() => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }, 10_000);
  return exited.finally(() => clearTimeout(timer));
}

/** Starts `node scripts/start.mjs ...args` with PORT set to a free port (plus `env`, which wins). */
export async function startScript(args: string[] = [], env: Record<string, string> = {}, options: StartOptions = {}): Promise<StartedScript> {
  const port = options.port ?? (await freePort());
  const ownsDir = options.localDir === undefined;
  const localDir = options.localDir ?? (await mkdtemp(join(tmpdir(), "gatehouse-start-")));
  const started = Date.now();
  // ISSUER and HTTPS from the caller's shell must not leak into a test of the defaults.
  const { ISSUER: _issuer, HTTPS: _https, DISPATCHER: _dispatcher, ...base } = childEnv({ FORCE_COLOR: "0", NO_COLOR: "1" });
  const child = spawn(nodeBinary(), [join(ROOT, "scripts", "start.mjs"), ...args], {
    cwd: ROOT,
    env: {
      ...base,
      PORT: String(port),
      GATEHOUSE_LOCAL_DIR: localDir,
      // `--dispatcher`: the local dispatch namespace and its release store also stay in the throwaway directory.
      NAMESPACE_PORT: String(await freePort()),
      NAMESPACE_STATE: join(localDir, ".namespace"),
      RELEASE_STORE: join(localDir, ".releases"),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let text = "";
  const append = (chunk: Buffer) => {
    text += chunk.toString();
    if (process.env.GATEHOUSE_E2E_LOG === "1") process.stderr.write(chunk);
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  const stop = async ({ keepLocalDir = false } = {}) => {
    await stopGroup(child);
    if (ownsDir && !keepLocalDir) await rm(localDir, { recursive: true, force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner within ${READY_TIMEOUT_MS} ms:\n${text}`)), READY_TIMEOUT_MS);
      const check = () => {
        if (BANNER_END.test(text)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on("data", check);
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`start.mjs exited (${signal ?? code}) before its banner:\n${text}`));
      });
    });
  } catch (error) {
    await stop();
    throw error;
  }
  const readyMs = Date.now() - started;
  const lines = () => text.split("\n");
  return {
    port,
    localDir,
    readyMs,
    output: () => text,
    lineAfter(heading) {
      const all = lines();
      const at = all.findIndex((line) => line.trim() === heading);
      if (at < 0 || all[at + 1] === undefined) throw new Error(`no "${heading}" in the banner:\n${text}`);
      return all[at + 1].trim();
    },
    field(label) {
      const line = lines().find((l) => l.trim().startsWith(label));
      if (!line) throw new Error(`no "${label}" in the banner:\n${text}`);
      return line.trim().slice(label.length).trim();
    },
    stop,
  };
}
