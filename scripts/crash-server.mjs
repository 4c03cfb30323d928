/**
 * The `wrangler dev` the crash tests kill and restart (scripts/crash-test.mjs, scripts/import-crash.mjs): one
 * fresh state folder with its own secrets, a server started on it on a new port each time (the killed one's
 * port may linger), the control plane's management token, and a read-only look at every tenant object's
 * SQLite file.
 */
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { childEnv, freePort, nodeBinary, randomSecret, ROOT, WRANGLER_JS } from "./e2e-server.mjs";
import { startProcessGroup } from "./process-group.mjs";

/** A fresh state folder named `<prefix>XXXXXX` under the system's temporary folder, with its env file. */
export async function crashServer(prefix) {
  const stateDir = await mkdtemp(join(tmpdir(), prefix));
  const secrets = { ENCRYPTION_KEY: randomSecret(), CONTROL_PLANE_CLIENT_SECRET: randomSecret() };
  const envFile = join(stateDir, "crash.env");
  await writeFile(envFile, `${Object.entries(secrets).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join("\n")}\n`, { mode: 0o600 });

  /** Starts `wrangler dev` on the state folder in its own process group; `base` is its loopback URL. */
  async function start() {
    const port = await freePort();
    const inspector = await freePort();
    const base = `http://localhost:${port}`;
    const server = await startProcessGroup({
      command: nodeBinary(),
      args: [WRANGLER_JS, "dev", "--ip", "127.0.0.1", "--port", String(port), "--inspector-ip", "127.0.0.1", "--inspector-port", String(inspector),
        "--persist-to", join(stateDir, "state"), "--show-interactive-dev-session=false", "--env-file", envFile, "--var", `ISSUER:${base}/`,
        // The webhook receiver listens on 127.0.0.1 (src/shared/egress-policy.ts refuses loopback unless this is set).
        "--var", "ALLOW_LOOPBACK_EGRESS:1"],
      cwd: ROOT,
      env: childEnv({ FORCE_COLOR: "0", NO_COLOR: "1" }),
      readyUrl: `${base}/.well-known/openid-configuration`,
      label: "wrangler",
    });
    return { ...server, base: `http://127.0.0.1:${port}` };
  }

  /** The control plane's management API token (client credentials of its system client). */
  async function managementToken(base) {
    const res = await fetch(`${base}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "client_credentials", client_id: "gatehouse-control-plane", client_secret: secrets.CONTROL_PLANE_CLIENT_SECRET, audience: "urn:gatehouse:management" }),
    });
    if (!res.ok) throw new Error(`token: ${res.status} ${await res.text()}`);
    return (await res.json()).access_token;
  }

  /** Calls `read(db)` on every tenant object's SQLite file that has `table` (read-only; also while wrangler runs). */
  async function forEachTenantDatabase(table, read) {
    const dir = join(stateDir, "state", "v3", "do", "gatehouse-TenantObject");
    for (const file of (await readdir(dir)).filter((f) => f.endsWith(".sqlite"))) {
      const db = new DatabaseSync(join(dir, file), { readOnly: true });
      try {
        if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").get(table)) read(db);
      } finally {
        db.close();
      }
    }
  }

  /** Deletes the state folder (the server stopped). */
  const remove = () => rm(stateDir, { recursive: true, force: true });

  return { start, managementToken, forEachTenantDatabase, remove };
}
