/**
 * Start a server process in its own process group and stop it cleanly: used by the e2e harness (wrangler dev)
 * and the benchmark (bare workerd). The group matters: wrangler spawns workerd, and one signal must reach both.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync, writeSync } from "node:fs";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Send a signal to a whole process group we started; false when it is already gone. */
export function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Poll `url` until it answers 200, the child exits, or the deadline passes.
 * @returns {Promise<void>}
 */
export async function waitForHttp(url, { timeoutMs = 90_000, exited = () => null, describe = () => "" } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer yet";
  while (Date.now() < deadline) {
    const exit = exited();
    if (exit) throw new Error(`server exited (${exit}) before it was ready${describe()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (error) {
      last = error?.cause?.code ?? error?.message ?? String(error);
    }
    await sleep(250);
  }
  throw new Error(`server not ready after ${timeoutMs} ms at ${url} (last: ${last})${describe()}`);
}

const running = new Set();
let isExitHookInstalled = false;

function installExitHook() {
  if (isExitHookInstalled) return;
  isExitHookInstalled = true;
  // Last resort if the runner dies without calling stop(): never leave a wrangler or workerd behind.
  process.on("exit", () => {
    for (const pid of running) killGroup(pid, "SIGKILL");
  });
}

/**
 * Spawns `command args` detached (its own process group), keeps the last `logLimitChars` of its output, waits
 * until `readyUrl` answers 200, and returns `stop()`: SIGTERM to the group, SIGKILL after `stopGraceMs`. With
 * `logFile`, the whole output is also written to that file as it arrives.
 * @returns {Promise<{pid: number, log: () => string, stop: () => Promise<void>}>}
 */
export async function startProcessGroup({
  command,
  args,
  cwd,
  env = process.env,
  readyUrl,
  timeoutMs = 90_000,
  label = command,
  logLimitChars = 200_000,
  stopGraceMs = 10_000,
  echo = false,
  logFile = null,
  /**
   * false: the server does not keep this process alive (its process and output pipes are unref'd), so a runner
   * whose teardown never comes still exits, and the exit hook then kills the group. @default true
   */
  holdsRunner = true,
}) {
  let output = "";
  // A file that receives all the output as it arrives (written synchronously, so a reader in another process
  // sees each line as soon as this one received it).
  let logFd = logFile ? openSync(logFile, "w", 0o600) : null;
  const append = (chunk) => {
    const text = chunk.toString();
    output = (output + text).slice(-logLimitChars);
    if (logFd !== null) writeSync(logFd, text);
    if (echo) process.stderr.write(text);
  };
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  installExitHook();
  running.add(child.pid);
  child.stdout.on("data", append);
  child.stderr.on("data", append);
  if (!holdsRunner) {
    child.unref();
    child.stdout.unref();
    child.stderr.unref();
  }
  let exitInfo = null;
  const exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => {
      exitInfo = signal ? `signal ${signal}` : `code ${code}`;
      resolve();
    });
  });
  child.on("error", (error) => {
    exitInfo = `spawn error: ${error.message}`;
  });

  let isStopped = false;
  async function stop() {
    if (isStopped) return;
    isStopped = true;
    if (!exitInfo && killGroup(child.pid, "SIGTERM")) {
      const timer = sleep(stopGraceMs).then(() => "timeout");
      if ((await Promise.race([exited, timer])) === "timeout") {
        killGroup(child.pid, "SIGKILL");
        await exited;
      }
    }
    // A grandchild (workerd under wrangler) may outlive its parent for a moment: it shares the group.
    killGroup(child.pid, "SIGKILL");
    running.delete(child.pid);
    if (logFd !== null) {
      // Output still buffered in the pipes after this is dropped from the file (it stays in log()).
      const fd = logFd;
      logFd = null;
      closeSync(fd);
    }
  }

  try {
    await waitForHttp(readyUrl, { timeoutMs, exited: () => exitInfo, describe: () => `\n--- ${label} output ---\n${output}` });
  } catch (error) {
    await stop();
    throw error;
  }
  return { pid: child.pid, log: () => output, stop };
}
