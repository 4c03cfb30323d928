/**
 * Serve the built bundle with bare `workerd` (PLATFORM.md "Benchmark on bare workerd, not on wrangler dev"):
 * generate a capnp config from wrangler.toml and the `wrangler deploy --dry-run` output, then start it.
 */
import { readdirSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { ROOT } from "../e2e-server.mjs";
import { startProcessGroup } from "../process-group.mjs";

/**
 * wrangler.toml sections this generator does NOT map (it maps `vars`, `durable_objects` and `worker_loaders`): if one is used,
 * the bench warns instead of guessing. Map it in writeWorkerdConfig when the app starts to need it.
 */
const UNMAPPED_KEYS = [
  "kv_namespaces", "d1_databases", "r2_buckets", "services", "queues", "ratelimits",
  "workflows", "analytics_engine_datasets", "send_email", "hyperdrive", "vectorize", "ai", "browser", "assets",
  "dispatch_namespaces", "mtls_certificates", "images", "version_metadata", "secrets_store_secrets", "pipelines",
  "unsafe",
];

/** wrangler's normalized config has empty arrays/objects for absent sections (`queues: {producers: []}`). */
function isPresent(value) {
  if (Array.isArray(value)) return value.length > 0;
  if (value && typeof value === "object") return Object.values(value).some(isPresent);
  return Boolean(value);
}

/**
 * The workerd binary wrangler itself runs (PLATFORM.md: use the one wrangler ships), not a wrapper script.
 * Falls back to the top-level `workerd` package.
 */
export function workerdBinary() {
  for (const base of [join(ROOT, "node_modules", "wrangler", "package.json"), join(ROOT, "package.json")]) {
    try {
      const mod = createRequire(base)("workerd");
      return { path: mod.default ?? mod, version: mod.version ?? "unknown" };
    } catch {
      // try the next location
    }
  }
  throw new Error("workerd is not installed (expected as a dependency of wrangler); run npm ci");
}

/** A capnp text literal. Our values are ASCII; JSON's escapes for quote, backslash and newline match capnp's. */
function capnpText(value) {
  const s = String(value);
  if (/[^\x20-\x7e]/.test(s)) throw new Error(`bench: cannot put a non-printable/non-ASCII value into capnp: ${JSON.stringify(s)}`);
  return JSON.stringify(s);
}

/**
 * Writes `<benchDir>/gatehouse.capnp` for the bundle in `<benchDir>/dist`.
 *
 * @param {object} options
 * @param {object} options.config wrangler config from `unstable_readConfig`
 * @param {string} options.benchDir directory holding `dist/` (the config embeds files relative to it)
 * @param {string} options.diskDir writable directory for Durable Object SQLite files
 * @param {number} options.port listening port on 127.0.0.1
 * @param {Record<string, string>} options.vars variables and secrets (override wrangler.toml [vars])
 * @returns {Promise<{configPath: string, warnings: string[]}>}
 */
export async function writeWorkerdConfig({ config, benchDir, diskDir, port, vars }) {
  const warnings = [];
  for (const key of UNMAPPED_KEYS) {
    if (isPresent(config[key])) {
      warnings.push(`wrangler.toml "${key}" is not mapped into the bench's workerd config (scripts/bench/workerd.mjs)`);
    }
  }

  const distDir = join(benchDir, "dist");
  const files = readdirSync(distDir);
  const main = "index.js";
  if (!files.includes(main)) throw new Error(`bench: ${distDir} has no ${main}; wrangler's dry-run output changed?`);
  // Wrangler's module rules: *.sql and *.umd.min.js (browser bundles served as text) as Text (wrangler.toml
  // [[rules]]). Other non-JS outputs are not modules.
  const modules = [`(name = ${capnpText(main)}, esModule = embed ${capnpText(relative(benchDir, join(distDir, main)))})`];
  for (const file of files.sort()) {
    if (file === main || file.endsWith(".map") || file === "README.md") continue;
    const path = capnpText(relative(benchDir, join(distDir, file)));
    if (file.endsWith(".sql") || file.endsWith(".txt") || file.endsWith(".html") || file.endsWith(".umd.min.js")) modules.push(`(name = ${capnpText(file)}, text = embed ${path})`);
    else if (file.endsWith(".wasm")) modules.push(`(name = ${capnpText(file)}, wasm = embed ${path})`);
    else if (file.endsWith(".bin")) modules.push(`(name = ${capnpText(file)}, data = embed ${path})`);
    else if (file.endsWith(".js") || file.endsWith(".mjs")) modules.push(`(name = ${capnpText(file)}, esModule = embed ${path})`);
    else warnings.push(`bench: ignoring unexpected build output ${file}`);
  }

  const doBindings = config.durable_objects?.bindings ?? [];
  const foreign = doBindings.filter((b) => b.script_name);
  if (foreign.length) warnings.push(`Durable Object bindings to other scripts are not supported: ${foreign.map((b) => b.name).join(", ")}`);
  const classes = [...new Set(doBindings.filter((b) => !b.script_name).map((b) => b.class_name))];
  const allVars = { ...(config.vars ?? {}), ...vars };
  const bindings = [
    ...Object.entries(allVars).map(([name, value]) =>
      typeof value === "string"
        ? `(name = ${capnpText(name)}, text = ${capnpText(value)})`
        : `(name = ${capnpText(name)}, json = ${capnpText(JSON.stringify(value))})`,
    ),
    ...doBindings
      .filter((b) => !b.script_name)
      .map((b) => `(name = ${capnpText(b.name)}, durableObjectNamespace = ${capnpText(b.class_name)})`),
    // Worker Loader (actions' sandbox): each binding its own loader cache.
    ...(config.worker_loaders ?? []).map((b) => `(name = ${capnpText(b.binding)}, workerLoader = (id = ${capnpText(b.binding)}))`),
  ];

  const text = `# Generated by scripts/bench.mjs for \`npm run bench\`; do not edit.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .gatehouse),
    (name = "disk", disk = (path = ${capnpText(diskDir)}, writable = true)),${
      // The worker's own fetches (webhooks, the egress gateway): public addresses, plus loopback when the
      // deployment allows it (the custom database rows' legacy store on 127.0.0.1).
      allVars.ALLOW_LOOPBACK_EGRESS === "1" ? `\n    (name = "internet", network = (allow = ["public", "local"])),` : ""
    }
  ],
  sockets = [
    (name = "http", address = ${capnpText(`127.0.0.1:${port}`)}, http = (), service = "main"),
  ],
);

const gatehouse :Workerd.Worker = (
  modules = [
    ${modules.join(",\n    ")},
  ],
  compatibilityDate = ${capnpText(config.compatibility_date)},
  compatibilityFlags = [${(config.compatibility_flags ?? []).map(capnpText).join(", ")}],
  bindings = [
    ${bindings.join(",\n    ")},
  ],
  durableObjectNamespaces = [
    ${classes.map((c) => `(className = ${capnpText(c)}, uniqueKey = ${capnpText(`${config.name}-${c}`)}, enableSql = true)`).join(",\n    ")},
  ],
  durableObjectStorage = (localDisk = "disk"),
);
`;
  const configPath = join(benchDir, "gatehouse.capnp");
  await writeFile(configPath, text);
  return { configPath, warnings };
}

/**
 * Starts `workerd serve` in its own process group and waits until `readyPath` answers 200.
 * @returns {Promise<{stop: () => Promise<void>, log: () => string, pid: number}>}
 */
export async function startWorkerd({ binary, configPath, baseUrl, readyPath, timeoutMs = 60_000 }) {
  return startProcessGroup({
    command: binary,
    // BENCH_INSPECT=PORT: workerd's inspector for a CPU profile (scripts/bench/profile.mjs).
    args: ["serve", configPath, "--experimental", ...(process.env.BENCH_INSPECT ? [`--inspector-addr=127.0.0.1:${process.env.BENCH_INSPECT}`] : [])],
    cwd: ROOT,
    readyUrl: `${baseUrl}${readyPath}`,
    timeoutMs,
    label: "workerd",
    logLimitChars: 100_000,
    stopGraceMs: 5_000,
  });
}
