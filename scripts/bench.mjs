/**
 * `npm run bench`: throughput of the real bundle on bare workerd (PLATFORM.md, last section). Not a test.
 *
 * 1. build with `wrangler deploy --dry-run --outdir .bench/dist`;
 * 2. generate `.bench/gatehouse.capnp` (Durable Objects with SQLite on a temporary directory, in memory
 *    (/dev/shm) where the machine has it: the rows measure the code, not this machine's fsync, which
 *    Durable Object storage in production does not put on the request path; BENCH_DISK_DIR overrides), every
 *    wrangler.toml var plus fresh secrets, BENCH_ROUTES=1, ISSUER=http://localhost:PORT/) and run
 *    `workerd serve --experimental` on 127.0.0.1:PORT;
 * 3. run every scenario of scripts/bench/scenarios.mjs (autocannon, bounded) and print a table and ratios;
 * 4. stop workerd and delete the temporary disk. Results also go to .bench/results.json.
 *
 * `--capacity` (issue 31): instead of the rows, the capacity model of one tenant (scripts/bench/capacity.mjs,
 * objects metered with OBJECT_METER=1); results in .bench/capacity.json.
 *
 * Options: --connections=N (default 4), --duration=S (default 8), --warmup=S (default 2),
 * --only=id,id (scenario ids), --var=KEY=VALUE (extra worker variable, repeatable), --rounds=N (each load row N
 * times, in turns; the median round by CPU is kept, the least printed beside it). Environment BENCH_CONNECTIONS / BENCH_DURATION_S /
 * BENCH_WARMUP_S / BENCH_ONLY / BENCH_ROUNDS also work.
 */
import { spawn } from "node:child_process";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import autocannon from "autocannon";
import { childEnv, freePort, nodeBinary, randomSecret, ROOT, WRANGLER_ENV, WRANGLER_JS } from "./e2e-server.mjs";
import { RATIOS, SCENARIOS } from "./bench/scenarios.mjs";
import { startWorkerd, workerdBinary, writeWorkerdConfig } from "./bench/workerd.mjs";
import { runCapacity } from "./bench/capacity.mjs";

/** Where the objects' SQLite files go: BENCH_DISK_DIR, else /dev/shm (memory) when present, else the temp dir. */
function benchStorageRoot() {
  if (process.env.BENCH_DISK_DIR) return process.env.BENCH_DISK_DIR;
  return existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
}

Object.assign(process.env, WRANGLER_ENV);

const BENCH_DIR = join(ROOT, ".bench");

function option(name, envName, fallback) {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  const raw = arg ? arg.slice(name.length + 3) : process.env[envName];
  return raw === undefined || raw === "" ? fallback : raw;
}

/** Bounded load (PLATFORM.md / env README: loopback only, bounded in count and time). */
const CONNECTIONS = Math.min(Math.max(Number(option("connections", "BENCH_CONNECTIONS", 4)), 1), 64);
const DURATION_S = Math.min(Math.max(Number(option("duration", "BENCH_DURATION_S", 8)), 1), 60);
const WARMUP_S = Math.min(Math.max(Number(option("warmup", "BENCH_WARMUP_S", 2)), 0), 30);
/**
 * `--rounds=N` (stop 33): each load row measured N times, the rows taken in turns (all rows once, then all again),
 * and the round whose workerd CPU per request is the median kept with all its figures (the others in `rounds`).
 * One round moved a row by ±20 % on this machine; rounds in turns move the rows of a ratio alike.
 */
const ROUNDS = Math.min(Math.max(Math.floor(Number(option("rounds", "BENCH_ROUNDS", 1))) || 1, 1), 9);
/** `--var=KEY=VALUE` (repeatable): extra worker variables, e.g. `--var=CONFIG_CACHE_TTL_MS=0`. */
const EXTRA_VARS = Object.fromEntries(
  process.argv
    .filter((a) => a.startsWith("--var="))
    .map((a) => {
      const [key, ...rest] = a.slice("--var=".length).split("=");
      return [key, rest.join("=")];
    }),
);
const CAPACITY = process.argv.includes("--capacity");
const ONLY = option("only", "BENCH_ONLY", "")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);

/** Runs a command to completion, capturing output; throws with the output on failure. */
function run(command, args, options) {
  return new Promise((resolve, reject) => {
    let output = "";
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (c) => (output += c));
    child.stderr.on("data", (c) => (output += c));
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(output) : reject(new Error(`${args.slice(0, 3).join(" ")} failed (${code}):\n${output}`))));
  });
}

async function build() {
  const outdir = join(BENCH_DIR, "dist");
  await rm(outdir, { recursive: true, force: true });
  await run(nodeBinary(), [WRANGLER_JS, "deploy", "--dry-run", "--outdir", outdir], { cwd: ROOT, env: childEnv({ FORCE_COLOR: "0" }) });
}

async function readWranglerConfig() {
  const { unstable_readConfig } = await import("wrangler");
  return unstable_readConfig({ config: join(ROOT, "wrangler.toml") });
}

/** One autocannon run. `target` is what a load scenario's setup returned. */
function load(baseUrl, host, target, durationS) {
  const { requests, method = "GET", path = "/", headers = {}, body } = target;
  const url = new URL(baseUrl);
  return autocannon({
    // 127.0.0.1 so the generator never depends on how "localhost" resolves; the Host header keeps the apex.
    url: `http://127.0.0.1:${url.port}${requests ? "" : path}`,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: durationS,
    timeout: 10,
    method,
    headers: { host, ...headers },
    body,
    requests,
  });
}

/**
 * CPU time (user + system, µs) the process has used so far, from /proc (Linux); null elsewhere. Read around a
 * row's measured run it gives workerd's CPU per request, a figure far steadier than throughput on a shared
 * machine (throughput moves with whatever else runs; CPU per request mostly does not).
 */
async function cpuMicros(pid) {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return null;
  }
}
/** Linux's USER_HZ: 100 on every mainstream kernel build. */
const CLOCK_TICKS = 100;

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  const started = Date.now();
  const workerd = workerdBinary();
  console.log(`Building with wrangler deploy --dry-run --outdir .bench/dist ...`);
  await build();
  const config = await readWranglerConfig();

  const port = await freePort();
  const baseUrl = `http://localhost:${port}`;
  const host = `localhost:${port}`;
  const diskDir = await mkdtemp(join(benchStorageRoot(), "gatehouse-bench-"));
  const vars = {
    ISSUER: `${baseUrl}/`,
    ENCRYPTION_KEY: randomSecret(),
    CONTROL_PLANE_CLIENT_SECRET: randomSecret(),
    BENCH_ROUTES: "1",
    // The custom database rows' legacy store listens on 127.0.0.1 (scripts/bench/custom-db.mjs).
    ALLOW_LOOPBACK_EGRESS: "1",
    // The management scenarios measure throughput, not the rate limit (issue 28 point 4): no 429 in the way.
    MANAGEMENT_RATE_LIMIT_CLIENT: "1000000000",
    MANAGEMENT_RATE_LIMIT_TENANT: "1000000000",
    // Nor the authentication endpoints' per-tenant limit (issue 31 point 4).
    AUTH_RATE_LIMIT_TENANT: "1000000000",
    // `--capacity`: the objects count their round trips and transactions (src/objects/meter.ts).
    // (and the passwordless class reads its code from the development message sink).
    // The configuration cache's revalidation (`getConfigVersion`) is one round trip per front isolate per
    // CONFIG_CACHE_TTL_MS, not per request: a window that caught one counted a fourth round trip in a login
    // now and then (stop 32). Capacity runs revalidate never (this isolate's own writes still invalidate at
    // once); docs/capacity.md charges the revalidation per isolate instead.
    ...(CAPACITY ? { OBJECT_METER: "1", DEV_MESSAGE_SINK: "1", CONFIG_CACHE_TTL_MS: "86400000" } : {}),
    ...EXTRA_VARS,
  };
  const clientSecret = vars.CONTROL_PLANE_CLIENT_SECRET;
  const clientId = vars.CONTROL_PLANE_CLIENT_ID ?? config.vars?.CONTROL_PLANE_CLIENT_ID ?? "gatehouse-control-plane";
  const { configPath, warnings } = await writeWorkerdConfig({ config, benchDir: BENCH_DIR, diskDir, port, vars });
  for (const warning of warnings) console.warn(`warning: ${warning}`);

  console.log(`Starting workerd ${workerd.version} on 127.0.0.1:${port} (${configPath.replace(`${ROOT}/`, "")}; objects stored under ${diskDir}) ...`);
  let server;
  try {
    server = await startWorkerd({ binary: workerd.path, configPath, baseUrl, readyPath: "/.well-known/openid-configuration" });
  } catch (error) {
    await rm(diskDir, { recursive: true, force: true });
    throw error;
  }
  const cleanup = async () => {
    await server.stop();
    await writeFile(join(BENCH_DIR, "workerd.log"), server.log());
    await rm(diskDir, { recursive: true, force: true });
  };
  const interrupt = () => {
    cleanup().finally(() => process.exit(130));
  };
  process.once("SIGINT", interrupt);
  process.once("SIGTERM", interrupt);

  const ctx = {
    baseUrl,
    host,
    clientId,
    clientSecret,
    fetch: (path, init) => fetch(`${baseUrl}${path}`, init),
    async managementToken() {
      const res = await fetch(`${baseUrl}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret, audience: "urn:gatehouse:management" }),
      });
      if (!res.ok) throw new Error(`management token: HTTP ${res.status} ${await res.text()}`);
      return (await res.json()).access_token;
    },
    /** Median of 3 in-worker runs after one warm-up (key generation and JIT happen in the warm-up). */
    async signRate(alg, n) {
      const once = async () => {
        const res = await fetch(`${baseUrl}/__bench/sign?alg=${alg}&n=${n}`);
        if (!res.ok) throw new Error(`/__bench/sign?alg=${alg}: HTTP ${res.status} ${await res.text()}`);
        const json = await res.json();
        if (json.alg !== alg || !json.per_second) throw new Error(`/__bench/sign?alg=${alg}: unexpected ${JSON.stringify(json)}`);
        return json.per_second;
      };
      await once();
      return median([await once(), await once(), await once()]);
    },
  };

  if (CAPACITY) {
    try {
      const result = await runCapacity(ctx, { realityS: Math.min(DURATION_S, 10), concurrency: Math.max(CONNECTIONS, 8) });
      await mkdir(BENCH_DIR, { recursive: true });
      await writeFile(join(BENCH_DIR, "capacity.json"), `${JSON.stringify({ workerd: workerd.version, node: process.version, ...result }, null, 2)}\n`);
      console.log(`\nResults in .bench/capacity.json (${Math.round((Date.now() - started) / 1000)} s in all).`);
    } finally {
      process.off("SIGINT", interrupt);
      process.off("SIGTERM", interrupt);
      await cleanup();
    }
    return;
  }

  const rows = [];
  /** The load rows measured again in later rounds (`--rounds`), with their targets. */
  const again = [];
  /** One measured run of a load row: its figures (throughput, workerd CPU per request, latency, failures). */
  const measureLoad = async (scenario, target, pid) => {
    if (WARMUP_S > 0) await load(baseUrl, host, target, WARMUP_S);
    const cpuBefore = await cpuMicros(pid);
    const result = await load(baseUrl, host, target, DURATION_S);
    const cpuAfter = await cpuMicros(pid);
    // A flow's /authorize answers 302 by design (scenarios.mjs, `redirectsAnswer`): not a failure.
    const redirects = scenario.redirectsAnswer
      ? Object.entries(result.statusCodeStats ?? {}).reduce((n, [code, { count }]) => (code.startsWith("3") ? n + count : n), 0)
      : 0;
    const bad = result.non2xx - redirects + result.errors + result.timeouts;
    return {
      // A row whose unit is several requests (a whole flow) counts units: scenarios.mjs, `requestsPerUnit`.
      perSecond: Math.round(result.requests.total / result.duration / (scenario.requestsPerUnit ?? 1)),
      cpuUsPerRequest: cpuBefore === null || cpuAfter === null ? null : Math.round((cpuAfter - cpuBefore) / Math.max(result.requests.total, 1)),
      meanMs: result.latency.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      total: result.requests.total,
      failed: bad,
      statusCodes: result.statusCodeStats,
      errors: result.errors,
      timeouts: result.timeouts,
    };
  };
  try {
    const scenarios = ONLY.length ? SCENARIOS.filter((s) => ONLY.includes(s.id)) : SCENARIOS;
    for (const scenario of scenarios) {
      process.stdout.write(`  ${scenario.label} ... `);
      try {
        if (scenario.kind === "probe") {
          const out = await scenario.run(ctx);
          const facts = typeof out === "object" && out !== null ? out : { perSecond: out };
          rows.push({ id: scenario.id, label: scenario.label, unit: scenario.unit, ...facts });
        } else {
          const target = await scenario.setup(ctx);
          if (!target.requests) {
            // Fail fast with the server's answer instead of benchmarking an error page.
            const probe = await ctx.fetch(target.path, { method: target.method ?? "GET", headers: target.headers, body: target.body });
            const text = await probe.text();
            if (probe.status !== (scenario.expectStatus ?? 200)) throw new Error(`probe answered HTTP ${probe.status}: ${text.slice(0, 300)}`);
          }
          const row = { id: scenario.id, label: scenario.label, unit: scenario.unit, ...(await measureLoad(scenario, target, server.pid)) };
          rows.push(row);
          if (ROUNDS > 1) again.push({ scenario, target, row });
        }
        const row = rows.at(-1);
        console.log(`${row.perSecond.toLocaleString("en-US")} ${row.unit}${row.failed ? ` (${row.failed} failed)` : ""}`);
      } catch (error) {
        rows.push({ id: scenario.id, label: scenario.label, unit: scenario.unit, perSecond: null, error: error.message });
        console.log(`FAILED: ${error.message}`);
      }
    }
    for (let round = 2; round <= ROUNDS; round++) {
      console.log(`  round ${round} of ${ROUNDS}:`);
      for (const entry of again) {
        process.stdout.write(`  ${entry.scenario.label} ... `);
        try {
          const got = await measureLoad(entry.scenario, entry.target, server.pid);
          entry.runs = [...(entry.runs ?? []), got];
          console.log(`${got.perSecond.toLocaleString("en-US")} ${entry.scenario.unit}${got.failed ? ` (${got.failed} failed)` : ""}`);
        } catch (error) {
          console.log(`FAILED: ${error.message}`);
        }
      }
    }
    for (const entry of again) {
      const { id, label, unit, ...first } = entry.row;
      const runs = [first, ...(entry.runs ?? [])];
      const byCpu = [...runs].sort((a, b) => (a.cpuUsPerRequest ?? 0) - (b.cpuUsPerRequest ?? 0));
      const kept = byCpu[Math.floor(byCpu.length / 2)];
      // The least CPU of the rounds too (stop 34): this host's noise only ever adds time, so each row's quietest
      // round is the other robust reading; the CPU ratios are printed both ways.
      const least = Math.min(...runs.map((r) => r.cpuUsPerRequest ?? Number.POSITIVE_INFINITY));
      Object.assign(entry.row, kept, {
        failed: runs.reduce((n, r) => n + (r.failed ?? 0), 0),
        rounds: runs.map((r) => ({ perSecond: r.perSecond, cpuUsPerRequest: r.cpuUsPerRequest })),
        ...(Number.isFinite(least) ? { leastCpuUsPerRequest: least } : {}),
      });
    }
  } finally {
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
    await cleanup();
  }

  printReport(rows, workerd.version);
  for (const row of rows.filter((r) => r.rounds)) {
    console.log(`  ${row.id}: rounds ${row.rounds.map((r) => `${r.perSecond}/s ${r.cpuUsPerRequest} µs`).join(", ")}; kept the median by CPU (least ${row.leastCpuUsPerRequest ?? "-"} µs)`);
  }
  const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
  const ratios = RATIOS.filter((r) => ratioValue(r, byId) !== null).map((r) => {
    const least = ratioOfLeast(r, byId);
    return { ...r, value: ratioValue(r, byId), ...(least === null ? {} : { valueByLeastCpu: least }) };
  });
  await mkdir(BENCH_DIR, { recursive: true });
  await writeFile(
    join(BENCH_DIR, "results.json"),
    `${JSON.stringify({ at: new Date().toISOString(), workerd: workerd.version, node: process.version, cpus: cpus().length, connections: CONNECTIONS, durationS: DURATION_S, rows, ratios }, null, 2)}\n`,
  );
  console.log(`\nResults in .bench/results.json, workerd's output in .bench/workerd.log (${Math.round((Date.now() - started) / 1000)} s in all).`);
  if (rows.some((r) => r.perSecond === null)) process.exitCode = 1;
}

/** A ratio's value from two rows (fields default to the per-second rate), or null when either is missing. */
function ratioValue(ratio, byId) {
  const [top, bottom] = ratio.fields ?? ["perSecond", "perSecond"];
  const a = byId[ratio.numerator]?.[top];
  const b = byId[ratio.denominator]?.[bottom];
  return a && b ? a / b : null;
}

/** A CPU ratio from each row's least-CPU round (rows measured in rounds only), or null. */
function ratioOfLeast(ratio, byId) {
  if (!ratio.fields?.every((f) => f === "cpuUsPerRequest")) return null;
  const a = byId[ratio.numerator]?.leastCpuUsPerRequest;
  const b = byId[ratio.denominator]?.leastCpuUsPerRequest;
  return a && b ? a / b : null;
}

function printReport(rows, workerdVersion) {
  const fmt = (n) => (n === null || n === undefined ? "-" : Number(n).toLocaleString("en-US"));
  const table = rows.map((r) => [r.label, r.perSecond === null ? "FAILED" : fmt(r.perSecond), r.unit, r.meanMs === undefined ? "-" : r.meanMs.toFixed(2), fmt(r.cpuUsPerRequest), fmt(r.p50), fmt(r.p99), r.failed === undefined ? (r.ms === undefined ? "-" : `${fmt(r.ms)} ms`) : fmt(r.failed)]);
  const head = ["scenario", "per second", "unit", "mean ms", "workerd CPU µs/req", "p50 ms", "p99 ms", "non-2xx/err (or time)"];
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((row) => String(row[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => (i === 0 || i === 2 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join(" | ")} |`;
  console.log(
    `\nGatehouse on bare workerd ${workerdVersion}, ${availableParallelism()} cores, Node ${process.version}; autocannon: ${CONNECTIONS} connections, ${DURATION_S} s per row (after ${WARMUP_S} s warm-up)\n`,
  );
  console.log(line(head));
  console.log(`|${widths.map((w, i) => (i === 0 || i === 2 ? "-".repeat(w + 2) : `${"-".repeat(w + 1)}:`)).join("|")}|`);
  for (const row of table) console.log(line(row));
  const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
  console.log("\nRatios (same run):");
  for (const ratio of RATIOS) {
    const value = ratioValue(ratio, byId);
    const least = ratioOfLeast(ratio, byId);
    console.log(`  ${ratio.label}: ${value === null ? "n/a" : value.toFixed(3)}${least === null ? "" : ` (each row's least-CPU round: ${least.toFixed(3)})`}`);
  }
  for (const row of rows.filter((r) => r.error)) console.log(`\n${row.id} failed: ${row.error}`);
  for (const row of rows.filter((r) => r.failed)) {
    const codes = Object.entries(row.statusCodes ?? {})
      .filter(([code]) => !code.startsWith("2"))
      .map(([code, { count }]) => `${count} x HTTP ${code}`);
    if (row.errors) codes.push(`${row.errors} connection errors`);
    if (row.timeouts) codes.push(`${row.timeouts} timeouts`);
    console.log(`\nwarning: ${row.id} had failures (${codes.join(", ")}); workerd's output is in .bench/workerd.log`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
