/**
 * `npm run release`: build a release of the tenant service into the local release store (issue 16 point 1).
 *
 *   npm run release                        # version = package.json version + "-" + git short sha (+ "-dirty")
 *   npm run release -- --version 1.2.0 --configuration default
 *   RELEASE_STORE=/path npm run release    # store elsewhere (default .releases/)
 *
 * A release is `wrangler deploy --dry-run --outdir` (the exact bundle `wrangler deploy` would upload; it runs
 * offline, PLATFORM.md) copied to `<store>/<configuration>/<version>/dist/` with `manifest.json`:
 * `{ worker_version, bundle_configuration, schema: {tenant, user, platform}, main_module, files, sha256, built_at }`.
 * The schema versions are the last migration of each object in this build: an upgrade onto this release
 * applies every migration after the tenant's current one (src/objects/<object>/migrations.ts).
 * A release is immutable: building an existing version again is refused unless `--force`.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { childEnv, nodeBinary, ROOT, WRANGLER_JS } from "./e2e-server.mjs";

export const RELEASE_STORE = process.env.RELEASE_STORE || join(ROOT, ".releases");
const SAFE = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$/;

function arg(name) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function defaultVersion() {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  try {
    const sha = execFileSync("git", ["rev-parse", "--short=7", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "migrations"], { cwd: ROOT, encoding: "utf8" }).trim();
    return `${pkg.version}-${sha}${dirty ? "-dirty" : ""}`;
  } catch {
    return pkg.version;
  }
}

/** The last migration name of each object (`0012_mfa`), from migrations/<object>/. */
export function schemaVersions() {
  const out = {};
  for (const object of ["tenant", "user", "platform"]) {
    const files = readdirSync(join(ROOT, "migrations", object)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
    out[object] = files.at(-1)?.replace(/\.sql$/, "") ?? null;
  }
  return out;
}

/** compatibility_date and flags from wrangler.toml (the copy runs with the same). */
function compatibility() {
  const toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1];
  return {
    compatibility_date: date ?? "2026-08-01",
    compatibility_flags: flags ? [...flags.matchAll(/"([^"]+)"/g)].map((m) => m[1]) : [],
  };
}

async function main() {
  const version = arg("version") ?? defaultVersion();
  const configuration = arg("configuration") ?? "default";
  for (const [label, value] of [["version", version], ["configuration", configuration]]) {
    if (!SAFE.test(value)) throw new Error(`--${label} must match ${SAFE} (got ${JSON.stringify(value)})`);
  }
  const dir = join(RELEASE_STORE, configuration, version);
  if (existsSync(join(dir, "manifest.json")) && !process.argv.includes("--force")) {
    throw new Error(`release ${configuration}/${version} already exists in ${dir} (releases are immutable; --force rebuilds)`);
  }
  await rm(dir, { recursive: true, force: true });
  const dist = join(dir, "dist");
  await mkdir(dist, { recursive: true });
  console.log(`Building ${configuration}/${version} with wrangler deploy --dry-run --outdir ...`);
  const built = spawnSync(nodeBinary(), [WRANGLER_JS, "deploy", "--dry-run", "--outdir", dist], {
    cwd: ROOT,
    env: childEnv({ FORCE_COLOR: "0" }),
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (built.status !== 0) throw new Error(`wrangler deploy --dry-run failed (${built.status})`);
  const files = readdirSync(dist).filter((f) => !f.endsWith(".map") && f !== "README.md").sort();
  if (!files.includes("index.js")) throw new Error("the build has no index.js (wrangler's dry-run output changed?)");
  const hash = createHash("sha256");
  for (const file of files) hash.update(file).update("\0").update(readFileSync(join(dist, file)));
  const manifest = {
    worker_version: version,
    bundle_configuration: configuration,
    schema: schemaVersions(),
    main_module: "index.js",
    ...compatibility(),
    files,
    sha256: hash.digest("hex"),
    built_at: new Date().toISOString(),
  };
  await writeFile(join(dir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  // The configuration's current release: what a new tenant or an upgrade without worker_version gets.
  if (!process.argv.includes("--no-current")) {
    await writeFile(join(RELEASE_STORE, configuration, "current.json"), `${JSON.stringify({ worker_version: version }, null, 2)}\n`);
  }
  console.log(`Release ${configuration}/${version} in ${dir}\n${JSON.stringify(manifest.schema)} sha256 ${manifest.sha256.slice(0, 12)}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error(`release: ${error.message}`);
    process.exit(1);
  });
}
