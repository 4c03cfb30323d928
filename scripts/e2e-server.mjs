/**
 * Start and stop a real `wrangler dev` for the end-to-end suite (and anything else that needs a live server).
 *
 * Each call gets its own free port, its own temporary persistence directory and freshly generated secrets, so
 * runs never share state with each other or with `npm start`. Nothing is written into the repository except
 * wrangler's own build scratch (`.wrangler/tmp`, git-ignored). Secrets go in an env file inside the temporary
 * directory (passed with `--env-file`, which also stops wrangler from reading the developer's `.dev.vars`);
 * ISSUER is passed with `--var` because it depends on the port.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { killGroup, startProcessGroup, waitForHttp } from "./process-group.mjs";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const WRANGLER_JS = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");

/** Environment every wrangler run gets: no telemetry, no outside fetch of `Request.cf` (PLATFORM.md). */
export const WRANGLER_ENV = { WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };

/** @default 90000 */
const READY_TIMEOUT_MS = 90_000;
/** How long stop() waits after SIGTERM before SIGKILL. @default 10000 */
const STOP_GRACE_MS = 10_000;
/** Wrangler output kept for error messages. @default 200000 */
const LOG_LIMIT_CHARS = 200_000;

/** A random secret: 32 bytes, base64url (43 characters). */
export const randomSecret = () => randomBytes(32).toString("base64url");

/**
 * The Node binary to run wrangler with. Wrangler needs Node >= 22.12; the repository pins Node 22 as a
 * devDependency (`node_modules/.bin/node`), which npm scripts put first on PATH, but a plain `node` may be 20.
 */
export function nodeBinary() {
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major > 22 || (major === 22 && minor >= 12)) return process.execPath;
  const pinned = join(ROOT, "node_modules", ".bin", "node");
  if (existsSync(pinned)) return pinned;
  throw new Error(`wrangler needs Node >= 22.12 (running ${process.version}); run npm ci to install the pinned node`);
}

/** Child environment: wrangler flags plus the pinned Node first on PATH (wrangler's own children use it). */
export function childEnv(extra = {}) {
  const bin = join(ROOT, "node_modules", ".bin");
  return { ...process.env, ...WRANGLER_ENV, PATH: `${dirname(nodeBinary())}:${bin}:${process.env.PATH ?? ""}`, ...extra };
}

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export { waitForHttp } from "./process-group.mjs";

/**
 * `fetch` that can reach tenant hosts (`http://{tenant_id}.localhost:PORT/`) from Node.
 *
 * Browsers and curl resolve `*.localhost` to loopback; Node's resolver does not (ENOTFOUND), and Node's fetch
 * silently replaces a `Host` header. So for `*.localhost` URLs this sends the request with `node:http` to
 * 127.0.0.1 with the real Host header and wraps the answer in a standard Response (redirects are not
 * followed: callers see 3xx, as with `redirect: "manual"`). Every other URL goes to the global fetch.
 * Usable as `customFetch` for openid-client / jose and as the auth0 SDK's `fetch` option.
 *
 * @param {RequestInfo | URL} input
 * @param {RequestInit} [init]
 * @returns {Promise<Response>}
 */
export async function localFetch(input, init) {
  const request = new Request(input, init);
  const url = new URL(request.url);
  if (url.protocol !== "http:" || !url.hostname.endsWith(".localhost")) return fetch(request);
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  const headers = Object.fromEntries(request.headers);
  headers.host = url.host;
  if (body) headers["content-length"] = String(body.length);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port: url.port || 80, method: request.method, path: `${url.pathname}${url.search}`, headers, signal: request.signal },
      (res) => {
        const chunks = [];
        res.on("data", (chunk) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const responseHeaders = new Headers();
          for (let i = 0; i < res.rawHeaders.length; i += 2) responseHeaders.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
          const nullBody = [101, 204, 205, 304].includes(res.statusCode) || request.method === "HEAD";
          resolve(new Response(nullBody ? null : Buffer.concat(chunks), { status: res.statusCode, statusText: res.statusMessage, headers: responseHeaders }));
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Multi-config runs: wrangler gives `--env-file` to the first (primary) worker only, so every other config is
 * copied into the run's temporary directory with its paths made absolute and the run's variables and secrets
 * written into its `[vars]` (local, throwaway values; the copy is deleted with the directory).
 */
export async function secondaryConfig(config, configs, dir, vars) {
  if (config === configs[0]) return config;
  const source = join(ROOT, config);
  let text = (await import("node:fs")).readFileSync(source, "utf8");
  text = text.replace(/^main\s*=\s*"([^"]+)"/m, (_m, main) => `main = ${JSON.stringify(join(ROOT, main))}`);
  text = text.replace(/^globs = \["\*\*\/\*(\.[^"]+)"\]/gm, (_m, ext) => `globs = ["**/*${ext}"]`);
  // The console's static assets and their build (wrangler.toml [assets], [build]) resolve from the checkout too.
  text = text.replace(/^directory\s*=\s*"([^"]+)"/m, (_m, dir) => `directory = ${JSON.stringify(join(ROOT, dir))}`);
  text = text.replace(/^watch_dir\s*=\s*"([^"]+)"/m, (_m, dir) => `watch_dir = ${JSON.stringify(join(ROOT, dir))}`);
  text = text.replace(/^command\s*=\s*"node ([^"]+)"/m, (_m, script) => `command = ${JSON.stringify(`node ${join(ROOT, script)}`)}`);
  const lines = Object.entries(vars).map(([k, v]) => `${k} = ${JSON.stringify(String(v))}`);
  text = text.replace(/^\[vars\]\n/m, `[vars]\n${lines.join("\n")}\n`);
  // The keys just added win over the file's own (TOML forbids duplicates: drop the file's later ones).
  const seen = new Set();
  let inVars = false;
  text = text
    .split("\n")
    .filter((line) => {
      if (/^\[/.test(line)) inVars = line.trim() === "[vars]";
      const key = inVars ? /^([A-Z_][A-Z0-9_]*)\s*=/.exec(line)?.[1] : undefined;
      if (!key) return true;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .join("\n");
  const out = join(dir, `secondary-${config.replace(/[^A-Za-z0-9.]/g, "_")}`);
  await writeFile(out, text, { mode: 0o600 });
  return out;
}

/**
 * Start `wrangler dev` on a free port with fresh secrets and a temporary persistence directory.
 *
 * @param {object} [options]
 * @param {Record<string, string>} [options.vars] extra variables/secrets for the worker (override the defaults)
 * @param {number} [options.timeoutMs] readiness deadline. @default 90000
 * @param {boolean} [options.echo] mirror wrangler's output to this process's stderr. @default env GATEHOUSE_E2E_LOG=1
 * @param {number} [options.port] the port to listen on (when ISSUER in vars must name it). @default a free port
 * @param {string[]} [options.configs] wrangler configs (`-c`), the first one serving the port (the dispatcher
 *   topology: `["wrangler.dispatcher.toml", "wrangler.toml"]`); ISSUER then goes in the env file for all.
 * @param {boolean} [options.shareable] the caller needs only a default server and touches no state another file
 *   reads: it gets the suite's shared server when one runs (test/e2e/global-setup.mjs), which it must not stop
 *   or kill. Files that sign users in to the control plane itself, count its logs, rotate its keys or bind
 *   actions to its logins start their own (the control plane's login throttles, logs and bound post-login
 *   actions would reach every file that uses it).
 * @param {string} [options.logFile] also write all of wrangler's output to this file as it arrives (the shared
 *   server's: files that use it read its output there).
 * @returns {Promise<{baseUrl: string, issuer: string, port: number, clientId: string, clientSecret: string,
 *   persistDir: string, log: () => string, stop: () => Promise<void>}>}
 */
export async function startServer({ vars = {}, timeoutMs = READY_TIMEOUT_MS, echo = process.env.GATEHOUSE_E2E_LOG === "1", port: chosenPort, configs = null, persistDir: keptDir = null, shareable = false, logFile = null, holdsRunner = true } = {}) {
  const shared = shareable ? sharedServer() : null;
  if (shared) {
    // The global setup does not wait for it to boot (test/e2e/global-setup.mjs): its first users do.
    await waitForHttp(`${shared.baseUrl}/.well-known/openid-configuration`, { timeoutMs });
    return shared;
  }
  const port = chosenPort ?? (await freePort());
  const inspectorPort = await freePort();
  // A caller-owned directory (crash tests restart on the same state) is neither created nor removed here.
  const persistDir = keptDir ?? (await mkdtemp(join(tmpdir(), "gatehouse-e2e-")));
  const baseUrl = `http://localhost:${port}`;
  const issuer = `${baseUrl}/`;
  const clientId = vars.CONTROL_PLANE_CLIENT_ID ?? "gatehouse-control-plane";
  const secrets = {
    // Multi-config runs (the dispatcher topology): every worker reads the env file, ISSUER included.
    ...(configs ? { ISSUER: issuer } : {}),
    ENCRYPTION_KEY: randomSecret(),
    CONTROL_PLANE_CLIENT_SECRET: randomSecret(),
    // The e2e receivers listen on 127.0.0.1 (src/shared/egress-policy.ts refuses loopback unless this is set).
    ALLOW_LOOPBACK_EGRESS: "1",
    ...vars,
  };
  const clientSecret = secrets.CONTROL_PLANE_CLIENT_SECRET;
  const envFile = join(persistDir, "e2e.env");
  await writeFile(envFile, `${Object.entries(secrets).map(([k, v]) => `${k}=${JSON.stringify(String(v))}`).join("\n")}\n`, { mode: 0o600 });

  const args = [
    WRANGLER_JS,
    "dev",
    "--ip", "127.0.0.1",
    "--port", String(port),
    "--inspector-ip", "127.0.0.1",
    "--inspector-port", String(inspectorPort),
    "--persist-to", join(persistDir, "state"),
    "--show-interactive-dev-session=false",
    "--env-file", envFile,
  ];
  for (const config of configs ?? []) args.push("-c", await secondaryConfig(config, configs, persistDir, secrets));
  if (!("ISSUER" in vars) && !configs) args.push("--var", `ISSUER:${issuer}`);

  let server;
  try {
    server = await startProcessGroup({
      command: nodeBinary(),
      args,
      cwd: ROOT,
      env: childEnv({ FORCE_COLOR: "0", NO_COLOR: "1" }),
      readyUrl: `${baseUrl}/.well-known/openid-configuration`,
      timeoutMs,
      label: "wrangler",
      logLimitChars: LOG_LIMIT_CHARS,
      stopGraceMs: STOP_GRACE_MS,
      echo,
      logFile,
      holdsRunner,
    });
  } catch (error) {
    if (!keptDir) await rm(persistDir, { recursive: true, force: true });
    throw error;
  }
  const stop = async () => {
    await server.stop();
    if (!keptDir) await rm(persistDir, { recursive: true, force: true });
  };
  /** A crash: SIGKILL to the whole process group (wrangler and its workerd), no cleanup. */
  const kill = async () => {
    killGroup(server.pid, "SIGKILL");
    await server.stop();
  };

  return { baseUrl, issuer, port, clientId, clientSecret, persistDir, log: server.log, stop, kill };
}

/** Where the e2e suite's global setup describes its shared server to the test processes (forked after it). */
export const SHARED_SERVER_ENV = "GATEHOUSE_E2E_SHARED_SERVER";

/**
 * The suite's shared default server, when the global setup started one. Starting `wrangler dev` costs 8-10 s of
 * two busy cores per file (bundle, then workerd's start); files that only make their own tenants share one
 * (issue 27 point 5). Its stop is a no-op: the global setup's teardown stops it and keeps its output in a file.
 */
function sharedServer() {
  const described = process.env[SHARED_SERVER_ENV];
  if (!described) return null;
  const { baseUrl, issuer, port, clientId, clientSecret, persistDir, logFile } = JSON.parse(described);
  return {
    baseUrl,
    issuer,
    port,
    clientId,
    clientSecret,
    persistDir,
    // The global setup writes the server's output to this file as it arrives.
    log: () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : `(the e2e suite's shared server: no output in ${logFile} yet)`),
    stop: async () => {},
    kill: async () => {
      throw new Error("the e2e suite's shared server cannot be killed by one file: start a server of your own");
    },
  };
}
