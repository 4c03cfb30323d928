import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { childEnv, freePort, localFetch, nodeBinary, randomSecret, ROOT, type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { startSupervisor, type Supervisor } from "../../scripts/namespace/supervisor.mjs";

/**
 * Fault test (issue 16): the server dies (SIGKILL, whole process group) in the middle of a provisioning
 * workflow and of an upgrade; restarted on the same state, both finish, or fail cleanly with the tenant
 * still serving on its old pin.
 */

type Json = Record<string, unknown>;
let store: string;
let nsState: string;
let persist: string;
let supervisor: Supervisor;
let server: RunningServer;
let port: number;
const vars: Record<string, string> = {};

async function start(): Promise<RunningServer> {
  return startServer({ configs: ["wrangler.dispatcher.toml", "wrangler.toml"], vars, persistDir: persist, port });
}

async function token(): Promise<string> {
  const res = await fetch(`${server.baseUrl}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grant_type: "client_credentials", client_id: "gatehouse-control-plane", client_secret: vars.CONTROL_PLANE_CLIENT_SECRET, audience: "urn:gatehouse:management" }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

async function api(method: string, path: string, body?: unknown): Promise<Json> {
  const res = await fetch(`${server.baseUrl}/api/v2${path}`, {
    method,
    headers: { authorization: `Bearer ${await token()}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return (await res.json()) as Json;
}

async function until<T>(what: string, fn: () => Promise<T | null>, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn().catch(() => null);
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${server.log().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Waits until the operation's journal shows `step` started, then kills the server and restarts it. */
async function crashDuring(operationId: string, step: string): Promise<void> {
  await until(`${step} to start`, async () => {
    const op = await api("GET", `/operations/${operationId}`);
    return (op.events as Json[] | undefined)?.some((e) => e.step === step && e.status === "started") ? true : null;
  });
  await server.kill();
  server = await start();
}

beforeAll(async () => {
  store = await mkdtemp(join(tmpdir(), "gatehouse-releases-"));
  nsState = await mkdtemp(join(tmpdir(), "gatehouse-namespace-"));
  persist = await mkdtemp(join(tmpdir(), "gatehouse-fault-"));
  for (const version of ["f-r1", "f-r2"]) {
    execFileSync(nodeBinary(), [join(ROOT, "scripts", "release.mjs"), "--version", version], { cwd: ROOT, env: childEnv({ RELEASE_STORE: store }), stdio: "ignore" });
  }
  supervisor = await startSupervisor({ stateDir: nsState, releaseStore: store });
  port = await freePort();
  Object.assign(vars, {
    ENCRYPTION_KEY: randomSecret(),
    CONTROL_PLANE_CLIENT_SECRET: randomSecret(),
    NAMESPACE_API_URL: supervisor.url,
    DEPLOY_STEP_RETRY_DELAY_MS: "1000",
    HOST_CACHE_NEGATIVE_TTL_MS: "0",
    // Crash recovery: an operation whose journal is idle this long is restarted (src/worker/deploy/resume.ts).
    DEPLOY_STALE_AFTER_MS: "4000",
  });
  server = await start();
}, 240_000);

afterAll(async () => {
  await server?.stop();
  await supervisor?.close();
  for (const dir of [store, nsState, persist]) if (dir) await rm(dir, { recursive: true, force: true });
});

it("a provisioning and an upgrade interrupted by a crash complete after the restart; the tenant serves throughout on a verified pin", async () => {
  const id = `f-${crypto.randomUUID().slice(0, 6)}`;
  expect(await api("POST", "/tenants", { id, deployment_type: "wfp", worker_version: "f-r1" })).toMatchObject({ provisioning_state: "pending" });
  const [provision] = ((await api("GET", `/tenants/${id}/operations`)).operations as Json[]) ?? [];
  await crashDuring(String(provision?.id), "upload-secrets");

  const tenant = await until("provisioning after the restart", async () => {
    const t = await api("GET", `/tenants/${id}`);
    return t.provisioning_state === "pending" ? null : t;
  });
  expect(tenant).toMatchObject({ provisioning_state: "ready", worker_version: "f-r1" });
  const journal = await api("GET", `/operations/${provision?.id}`);
  expect(journal.status).toBe("succeeded");
  const verify = (journal.events as Json[]).filter((e) => e.step === "verify" && e.status === "succeeded");
  expect(verify).toHaveLength(1);
  const disc = await localFetch(`http://${id}.localhost:${port}/.well-known/openid-configuration`);
  expect(disc.status).toBe(200);
  expect(disc.headers.get("x-gatehouse-release")).toBe("default/f-r1");

  const kids = async () =>
    (((await (await localFetch(`http://${id}.localhost:${port}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid).sort());
  const kidsBefore = await kids();
  expect(kidsBefore.length).toBeGreaterThan(0);
  const upgrade = await api("POST", `/tenants/${id}/operations`, { kind: "upgrade", worker_version: "f-r2" });
  expect(upgrade).toMatchObject({ kind: "upgrade", from_version: "f-r1", to_version: "f-r2" });
  // The riskiest moment of a two-slot upgrade: the switch hands the live data to the staged slot.
  await crashDuring(String(upgrade.id), "switch");
  const done = await until("upgrade after the restart", async () => {
    const op = await api("GET", `/operations/${upgrade.id}`);
    return op.status === "succeeded" || op.status === "failed" ? op : null;
  });
  const after = await api("GET", `/tenants/${id}`);
  // Either outcome is clean: finished on the new pin, or failed and serving on the old one.
  const pinned = done.status === "succeeded" ? "f-r2" : "f-r1";
  expect(after).toMatchObject({ provisioning_state: "ready", worker_version: pinned });
  const served = await localFetch(`http://${id}.localhost:${port}/.well-known/openid-configuration`);
  expect(served.status).toBe(200);
  expect(served.headers.get("x-gatehouse-release")).toBe(`default/${pinned}`);
  expect(done.status).toBe("succeeded");
  expect(after).toMatchObject({ worker_script_name: `tenant-${id}-auth--b` });
  // The resumed run went straight back to the switch: the staged slot was never staged or verified again.
  const succeeded = (done.events as Json[]).filter((e) => e.status === "succeeded").map((e) => e.step);
  expect(succeeded.filter((s) => s === "stage-script")).toHaveLength(1);
  expect(succeeded.filter((s) => s === "verify")).toHaveLength(1);
  expect(succeeded.at(-1)).toBe("switch");
  // The data moved with the switch: the copy still publishes the signing keys it had before the upgrade.
  expect(await kids()).toEqual(kidsBefore);
}, 600_000);
