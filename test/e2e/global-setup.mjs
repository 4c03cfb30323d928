import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findChromium } from "../../scripts/chromium.mjs";
import { freePort, ROOT, randomSecret, SHARED_SERVER_ENV, startServer } from "../../scripts/e2e-server.mjs";

/**
 * Before any end-to-end file starts a server: find the browser (scripts/chromium.mjs) and hand its path to the
 * test processes (forked after this runs, so they inherit it). Without one the run stops here with one line
 * saying what to do, rather than as many failed browser tests as there are, each with a launch stack trace.
 *
 * Then start the suite's shared default server: files that ask for a `shareable` server (they make their own
 * tenants and need no special variables beyond the development message sink) use it instead of starting one each. GATEHOUSE_E2E_SHARE=0 turns
 * it off (every file starts its own, as before). The files do not wait for it: its port, secret and state folder
 * are chosen here and handed over at once, and `startServer({ shareable: true })` waits until it answers, so the
 * files that start servers of their own (the longest ones, started first) begin while it boots.
 */
export default async function setup() {
  const found = await findChromium();
  if ("error" in found) {
    console.error(`\n${found.error}\n`);
    process.exit(1);
  }
  process.env.GATEHOUSE_E2E_CHROMIUM = found.path;
  if (process.env.GATEHOUSE_E2E_SHARE === "0") return undefined;

  // The development mail/SMS sink is on, as under `npm start`: files that read their emails share it too.
  // Its output goes to a file as it arrives: the files that share it read it there (RunningServer.log()).
  const logFile = join(ROOT, ".wrangler", "e2e-shared-server.log");
  await mkdir(join(ROOT, ".wrangler"), { recursive: true });
  const port = await freePort();
  const clientSecret = randomSecret();
  const persistDir = await mkdtemp(join(tmpdir(), "gatehouse-e2e-shared-"));
  // It does not hold the runner: one CI run (stop 30) sat idle after its last file because vitest never called this
  // teardown while the server's pipes kept the process alive; now the runner exits and the exit hook kills it.
  const starting = startServer({ port, persistDir, logFile, holdsRunner: false, vars: { DEV_MESSAGE_SINK: "1", CONTROL_PLANE_CLIENT_SECRET: clientSecret } }).then(
    (server) => ({ server }),
    (error) => {
      // The files that share it fail on their own (it never answers); this says why.
      console.error(`\nThe e2e suite's shared server did not start:\n${error?.stack ?? error}\n`);
      return { server: null };
    },
  );
  const baseUrl = `http://localhost:${port}`;
  const clientId = "gatehouse-control-plane";
  process.env[SHARED_SERVER_ENV] = JSON.stringify({ baseUrl, issuer: `${baseUrl}/`, port, clientId, clientSecret, persistDir, logFile });
  return async () => {
    const { server } = await starting;
    await server?.stop();
    await rm(persistDir, { recursive: true, force: true });
  };
}
