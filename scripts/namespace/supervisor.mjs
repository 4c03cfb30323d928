/**
 * The local dispatch namespace (issue 16 point 3): a small Node server that implements the subset of the
 * Cloudflare API the provisioner uses, and really runs every uploaded tenant script as its own `workerd`
 * process (the bundle of the release it was given, its own Durable Object storage on disk, its own secrets).
 *
 *   GET  /accounts/:a/d1/database?name=N            list (by name)      POST /accounts/:a/d1/database {name}
 *   POST /accounts/:a/d1/database/:id/query {sql}   recorded in d1/<id>.sql (the copy's storage is its objects)
 *   PUT  /accounts/:a/workers/dispatch/namespaces/:ns/scripts/:name        multipart: metadata + modules
 *   GET  .../scripts/:name/settings                  {tags, bindings}      DELETE .../scripts/:name
 *   GET  .../scripts/:name/secrets                   [{name, type}]        PUT .../scripts/:name/secrets {name, text}
 *   PUT  .../scripts/:staged?storage_from=:live      (local only) a staged slot of an upgrade starts on a snapshot
 *                                                    of the live script's storage: its migrations and checks never
 *                                                    write the live data
 *   POST .../scripts/:staged/promote {replaces}      (local only) the switch of a two-slot upgrade: stops the live
 *                                                    process, moves its storage to the staged slot, restarts the
 *                                                    staged process on it; the live name becomes an alias of the
 *                                                    staged one until it is uploaded again
 *   ANY  /__scripts/:name/<path>                     the request, forwarded to the script's workerd (the
 *                                                    dispatch namespace binding's `get(name).fetch()`); 404 with
 *                                                    `x-namespace-missing-script: 1` when there is no such script
 *   GET  /releases/<configuration>/<version>/...     the release store (.releases/), read-only
 *   GET  /__namespace                                the scripts, their ports, releases and pids (diagnostics)
 *
 * Why one workerd per script (docs/deployments.md): a copy is the whole service, three Durable
 * Object classes included; the Worker Loader cannot give a loaded worker its own Durable Object namespaces,
 * and facets would host one class per object, not a service. A process per script is what a dispatch
 * namespace is: separate code version, storage and secrets per tenant, restartable independently. The
 * generator of the capnp config is the benchmark's (scripts/bench/workerd.mjs).
 *
 * State lives under NAMESPACE_STATE (default .namespace/): scripts survive a restart of the supervisor.
 * Every update (code or secret) restarts that script's workerd on the same storage.
 *
 * Two processes never open the same storage: a staged slot runs on a copy, and a promotion stops the live
 * process before its storage moves (Durable Objects assume they are their storage's only writer; two workerd
 * processes on one SQLite file would each cache and alarm as if alone). Requests that arrive for either name
 * during a promotion wait for it and are then served by the promoted process.
 */
import { randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { cp, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { join, normalize } from "node:path";
import { freePort, ROOT } from "../e2e-server.mjs";
import { startWorkerd, workerdBinary, writeWorkerdConfig } from "../bench/workerd.mjs";

const json = (res, status, body, headers = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
};
const envelope = (result) => ({ success: true, errors: [], messages: [], result });
const failure = (message, code = 10000) => ({ success: false, errors: [{ code, message }], messages: [], result: null });

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

/**
 * @param {object} options
 * @param {number} [options.port] 0 = any free port
 * @param {string} [options.stateDir]
 * @param {string} [options.releaseStore]
 * @param {string} [options.apiToken] bearer the API requires (default: any)
 * @param {boolean} [options.echo] print workerd output
 */
export async function startSupervisor({
  port = 0,
  stateDir = process.env.NAMESPACE_STATE || join(ROOT, ".namespace"),
  releaseStore = process.env.RELEASE_STORE || join(ROOT, ".releases"),
  apiToken = process.env.NAMESPACE_API_TOKEN || null,
  echo = process.env.NAMESPACE_ECHO === "1",
} = {}) {
  /** @type {Map<string, {port: number, server: any, metadata: any, starting: Promise<void> | null}>} */
  const scripts = new Map();
  /** Old live name -> the slot that took its data over (promotions); persisted with the scripts. */
  const aliases = new Map();
  /** Promotions under way, by both names: requests wait for them. */
  const promoting = new Map();
  /** Test seam: `(name, path) => Promise<{status, body} | undefined>` runs before a request reaches a script. */
  const interceptors = new Set();
  const workerd = workerdBinary();
  await mkdir(join(stateDir, "scripts"), { recursive: true });
  await mkdir(join(stateDir, "d1"), { recursive: true });

  const scriptDir = (name) => join(stateDir, "scripts", name);
  const readJson = async (path, fallback) => (existsSync(path) ? JSON.parse(await readFile(path, "utf8")) : fallback);

  async function launch(name) {
    const dir = scriptDir(name);
    const metadata = await readJson(join(dir, "metadata.json"), null);
    if (!metadata) return;
    const secrets = await readJson(join(dir, "secrets.json"), {});
    const previous = scripts.get(name);
    if (previous?.server) await previous.server.stop();
    const scriptPort = previous?.port ?? (await freePort());
    const vars = {};
    for (const b of metadata.bindings ?? []) if (b.type === "plain_text") vars[b.name] = b.text;
    for (const [k, v] of Object.entries(secrets)) vars[k] = v;
    const config = {
      // The Durable Object namespaces' unique keys (and so the objects' ids and files) follow the copy's storage
      // identity, not the slot's name: both slots of a copy address the same objects.
      name: storageKeyOf(name),
      compatibility_date: metadata.compatibility_date,
      compatibility_flags: metadata.compatibility_flags ?? [],
      vars: {},
      durable_objects: {
        bindings: (metadata.bindings ?? []).filter((b) => b.type === "durable_object_namespace").map((b) => ({ name: b.name, class_name: b.class_name })),
      },
      worker_loaders: [{ binding: "LOADER" }],
    };
    await mkdir(join(dir, "storage"), { recursive: true });
    const { configPath } = await writeWorkerdConfig({ config, benchDir: dir, diskDir: join(dir, "storage"), port: scriptPort, vars });
    const entry = { port: scriptPort, server: null, metadata, starting: null };
    scripts.set(name, entry);
    entry.starting = (async () => {
      entry.server = await startWorkerd({ binary: workerd.path, configPath, baseUrl: `http://127.0.0.1:${scriptPort}`, readyPath: "/__gatehouse/deploy/ready", timeoutMs: 60_000 });
      if (echo) console.log(`[namespace] ${name} (${tagOf(metadata, "worker_version")}) on 127.0.0.1:${scriptPort} pid ${entry.server.pid}`);
    })();
    try {
      await entry.starting;
    } finally {
      entry.starting = null;
    }
  }

  const tagOf = (metadata, key) => (metadata.tags ?? []).find((t) => t.startsWith(`${key}:`))?.slice(key.length + 1) ?? null;

  const aliasFile = join(stateDir, "aliases.json");
  for (const [from, to] of Object.entries(await readJson(aliasFile, {}))) aliases.set(from, to);
  const saveAliases = () => writeFile(aliasFile, JSON.stringify(Object.fromEntries(aliases)));

  /** The storage identity of a script: its own name, or the script whose storage it took (a staged slot). */
  const storageKeyOf = (name) => {
    const file = join(scriptDir(name), "storage-key");
    return existsSync(file) ? readFileSync(file, "utf8").trim() || name : name;
  };

  async function stopScript(name) {
    const entry = scripts.get(name);
    if (entry?.starting) await entry.starting.catch(() => {});
    await entry?.server?.stop();
    scripts.delete(name);
  }

  async function promote(staged, live) {
    if (aliases.get(live) === staged) return; // already promoted (a retried switch)
    const liveDir = scriptDir(live);
    const stagedDir = scriptDir(staged);
    if (!existsSync(join(stagedDir, "metadata.json"))) throw new Error(`staged script ${staged} does not exist`);
    // Stop both before the storage moves: never two writers on one storage.
    await stopScript(live);
    await stopScript(staged);
    if (existsSync(join(liveDir, "storage"))) {
      await writeFile(join(stagedDir, "storage-key"), storageKeyOf(live));
      await rm(join(stagedDir, "storage"), { recursive: true, force: true });
      await rename(join(liveDir, "storage"), join(stagedDir, "storage"));
    }
    await rm(liveDir, { recursive: true, force: true });
    aliases.set(live, staged);
    await saveAliases();
    await launch(staged);
  }

  // Restore the scripts of a previous run.
  for (const name of readdirSync(join(stateDir, "scripts"))) {
    if (existsSync(join(scriptDir(name), "metadata.json"))) await launch(name);
  }

  async function body(req) {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    return Buffer.concat(chunks);
  }

  async function handleApi(req, res, url, parts) {
    if (apiToken && req.headers.authorization !== `Bearer ${apiToken}`) return json(res, 403, failure("Authentication error", 10000));
    // parts: ["accounts", a, ...]
    const rest = parts.slice(2);
    if (rest[0] === "d1" && rest[1] === "database") {
      if (rest.length === 2 && req.method === "GET") {
        const name = url.searchParams.get("name");
        const all = readdirSync(join(stateDir, "d1")).filter((f) => f.endsWith(".json")).map((f) => JSON.parse(readFileSync(join(stateDir, "d1", f), "utf8")));
        return json(res, 200, envelope(all.filter((db) => !name || db.name === name)));
      }
      if (rest.length === 2 && req.method === "POST") {
        const { name } = JSON.parse((await body(req)).toString() || "{}");
        if (!name || !SAFE_NAME.test(name)) return json(res, 400, failure("invalid database name"));
        const db = { uuid: randomUUID(), name, created_at: new Date().toISOString() };
        await writeFile(join(stateDir, "d1", `${db.uuid}.json`), JSON.stringify(db));
        return json(res, 200, envelope(db));
      }
      if (rest.length === 4 && rest[3] === "query" && req.method === "POST") {
        const { sql } = JSON.parse((await body(req)).toString() || "{}");
        await writeFile(join(stateDir, "d1", `${rest[2]}.sql`), `${sql}\n`, { flag: "a" });
        return json(res, 200, envelope([{ results: [], success: true }]));
      }
    }
    if (rest[0] === "workers" && rest[1] === "dispatch" && rest[2] === "namespaces" && rest[4] === "scripts") {
      const name = rest[5];
      if (!name || !SAFE_NAME.test(name)) return json(res, 400, failure("invalid script name"));
      const dir = scriptDir(name);
      const exists = existsSync(join(dir, "metadata.json"));
      const sub = rest[6];
      if (!sub && req.method === "PUT") {
        const from = url.searchParams.get("storage_from");
        if (from) {
          if (!SAFE_NAME.test(from) || from === name) return json(res, 400, failure("invalid storage_from"));
          // Never snapshot over the data a promotion moved here: `from` is then only an alias of this script.
          if (aliases.get(from) === name || !existsSync(join(scriptDir(from), "storage"))) {
            return json(res, 409, failure(`${from} has no storage of its own (it was promoted to ${aliases.get(from) ?? "nothing"})`, 10021));
          }
        }
        const request = new Request(url, { method: "PUT", headers: { "content-type": req.headers["content-type"] }, body: await body(req) });
        const form = await request.formData();
        const metadata = JSON.parse(await form.get("metadata").text());
        await rm(join(dir, "dist"), { recursive: true, force: true });
        await mkdir(join(dir, "dist"), { recursive: true });
        for (const [field, value] of form.entries()) {
          if (field === "metadata" || typeof value === "string") continue;
          const file = normalize(value.name || field);
          if (file.includes("/") || file.startsWith(".")) return json(res, 400, failure(`invalid module name ${file}`));
          await writeFile(join(dir, "dist", file), Buffer.from(await value.arrayBuffer()));
        }
        await writeFile(join(dir, "metadata.json"), JSON.stringify(metadata, null, 2));
        if (!existsSync(join(dir, "secrets.json"))) await writeFile(join(dir, "secrets.json"), "{}", { mode: 0o600 });
        if (from) {
          // A snapshot of the live storage for the staged slot (the live process keeps running on the original).
          await stopScript(name);
          await rm(join(dir, "storage"), { recursive: true, force: true });
          await cp(join(scriptDir(from), "storage"), join(dir, "storage"), { recursive: true });
          await writeFile(join(dir, "storage-key"), storageKeyOf(from));
        }
        if (aliases.delete(name)) await saveAliases();
        await launch(name);
        return json(res, 200, envelope({ id: name, tags: metadata.tags ?? [] }));
      }
      if (sub === "promote" && req.method === "POST") {
        const { replaces } = JSON.parse((await body(req)).toString() || "{}");
        if (!replaces || !SAFE_NAME.test(replaces) || replaces === name) return json(res, 400, failure("replaces must name the live script"));
        let done = promoting.get(name);
        if (!done) {
          done = promote(name, replaces).finally(() => {
            promoting.delete(name);
            promoting.delete(replaces);
          });
          promoting.set(name, done);
          promoting.set(replaces, done);
        }
        await done;
        return json(res, 200, envelope({ id: name, replaces }));
      }
      if (!exists) return json(res, 404, failure("This Worker does not exist on your account.", 10007));
      const metadata = await readJson(join(dir, "metadata.json"), {});
      if (sub === "settings" && req.method === "GET") {
        return json(res, 200, envelope({ tags: metadata.tags ?? [], bindings: (metadata.bindings ?? []).map(({ text: _t, ...b }) => b) }));
      }
      if (!sub && req.method === "DELETE") {
        await scripts.get(name)?.server?.stop();
        scripts.delete(name);
        await rm(dir, { recursive: true, force: true });
        return json(res, 200, envelope(null));
      }
      if (sub === "secrets") {
        const secrets = await readJson(join(dir, "secrets.json"), {});
        if (req.method === "GET") return json(res, 200, envelope(Object.keys(secrets).map((n) => ({ name: n, type: "secret_text" }))));
        if (req.method === "PUT") {
          const { name: key, text } = JSON.parse((await body(req)).toString() || "{}");
          if (!key || typeof text !== "string") return json(res, 400, failure("name and text are required"));
          if (secrets[key] === text) return json(res, 200, envelope({ name: key, type: "secret_text" }));
          secrets[key] = text;
          await writeFile(join(dir, "secrets.json"), JSON.stringify(secrets), { mode: 0o600 });
          await launch(name);
          return json(res, 200, envelope({ name: key, type: "secret_text" }));
        }
      }
    }
    return json(res, 404, failure(`no route for ${req.method} ${url.pathname}`, 7003));
  }

  async function forward(req, res, requested, path) {
    const pending = promoting.get(requested);
    if (pending) await pending.catch(() => {});
    const name = scripts.has(requested) ? requested : (aliases.get(requested) ?? requested);
    for (const intercept of interceptors) {
      const answer = await intercept(name, path);
      if (answer) return json(res, answer.status, answer.body ?? { error: "intercepted" });
    }
    const entry = scripts.get(name);
    if (!entry) return json(res, 404, { error: "script_not_found", script: name }, { "x-namespace-missing-script": "1" });
    if (entry.starting) await entry.starting;
    const headers = { ...req.headers };
    delete headers.host;
    delete headers.connection;
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const upstream = await fetch(`http://127.0.0.1:${entry.port}${path}`, {
      method: req.method,
      headers: { ...headers, host: req.headers["x-forwarded-host"] ?? req.headers.host },
      body: hasBody ? await body(req) : undefined,
      redirect: "manual",
    });
    const out = {};
    upstream.headers.forEach((v, k) => {
      if (k !== "content-encoding" && k !== "content-length" && k !== "transfer-encoding" && k !== "set-cookie") out[k] = v;
    });
    const cookies = upstream.headers.getSetCookie?.() ?? [];
    if (cookies.length) out["set-cookie"] = cookies;
    res.writeHead(upstream.status, out);
    res.end(Buffer.from(await upstream.arrayBuffer()));
  }

  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, "http://namespace");
      const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
      if (parts[0] === "accounts") return await handleApi(req, res, url, parts);
      if (parts[0] === "__scripts" && parts[1]) {
        const prefix = `/__scripts/${encodeURIComponent(parts[1])}`;
        return await forward(req, res, parts[1], req.url.slice(prefix.length) || "/");
      }
      if (parts[0] === "releases" && req.method === "GET") {
        const file = normalize(join(releaseStore, ...parts.slice(1)));
        if (!file.startsWith(releaseStore) || !existsSync(file)) return json(res, 404, { error: "not_found" });
        res.writeHead(200, { "content-type": file.endsWith(".json") ? "application/json" : "application/octet-stream" });
        return res.end(await readFile(file));
      }
      if (url.pathname === "/__namespace") {
        return json(res, 200, {
          scripts: [...scripts].map(([name, e]) => ({ name, port: e.port, pid: e.server?.pid ?? null, tags: e.metadata?.tags ?? [] })),
          aliases: Object.fromEntries(aliases),
        });
      }
      return json(res, 404, { error: "not_found" });
    } catch (error) {
      if (!res.headersSent) json(res, 502, failure(`namespace supervisor: ${error.message}`));
      else res.end();
    }
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    scripts,
    aliases,
    /** Runs `fn(name, path)` before each request reaches a script; an answer it returns is sent instead. Returns a remover. */
    intercept(fn) {
      interceptors.add(fn);
      return () => interceptors.delete(fn);
    },
    async close() {
      server.close();
      for (const entry of scripts.values()) await entry.server?.stop();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sup = await startSupervisor({ port: Number(process.env.NAMESPACE_PORT || 0), echo: true });
  console.log(`[namespace] supervisor on ${sup.url} (state ${process.env.NAMESPACE_STATE || ".namespace"})`);
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => sup.close().then(() => process.exit(0)));
}
