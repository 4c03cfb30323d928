import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, get } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ensureDevCa, startTlsFront, writeApexLeaf } from "../../scripts/dev-https.mjs";
import { freePort, nodeBinary, ROOT } from "../../scripts/e2e-server.mjs";
import { type StartedScript, startScript } from "./helpers/start-script";

const run = promisify(execFile);
const CLIENT = join(ROOT, "test", "e2e", "helpers", "https-sdk-client.mjs");

/** GET over https to 127.0.0.1 with `host` as SNI and Host, trusting only `ca`: what a browser on *.localhost does. */
function getStrict(host: string, port: number, path: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get({ host: "127.0.0.1", port, path, servername: host, headers: { host: `${host}:${port}` }, ca }, (res) => {
      let body = "";
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
  });
}

/**
 * `npm start -- --https` (issue 27): the official SDKs work against a local Gatehouse by changing only the
 * domain, once Node trusts the development CA through the one variable the banner prints. Without it, the
 * same program is refused (the CA is local, not a public one).
 */
describe("npm start --https", () => {
  let started: StartedScript;
  let caPath: string;
  let clientSecret: string;

  beforeAll(async () => {
    started = await startScript(["--https"]);
    caPath = started.lineAfter("Node clients (the auth0 SDK, openid-client) trust it with:").replace(/^export NODE_EXTRA_CA_CERTS=/, "");
    clientSecret = started.field("Control-plane client_secret:");
  });

  afterAll(async () => {
    await started?.stop();
  });

  const sdkRun = (env: Record<string, string>) =>
    run(nodeBinary(), [CLIENT], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        GATEHOUSE_DOMAIN: `localhost:${started.port}`,
        GATEHOUSE_CLIENT_ID: "gatehouse-control-plane",
        GATEHOUSE_CLIENT_SECRET: clientSecret,
        ...env,
      },
    });

  it("prints an https issuer and the CA file under the local .wrangler/ directory", () => {
    expect(started.field("Issuer:")).toBe(`https://localhost:${started.port}/`);
    expect(started.field("Child tenants:")).toBe(`https://{tenant_id}.localhost:${started.port}/`);
    expect(caPath).toBe(join(started.localDir, ".wrangler", "dev-ca", "ca.pem"));
    expect(readFileSync(caPath, "utf8")).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });

  it("serves the unmodified auth0 ManagementClient and openid-client with only NODE_EXTRA_CA_CERTS set", async () => {
    const tenantId = `tls-${Date.now().toString(36)}`;
    const { stdout } = await sdkRun({ NODE_EXTRA_CA_CERTS: caPath, GATEHOUSE_TENANT_ID: tenantId });
    const result = JSON.parse(stdout) as { createdStatus: number; createdId: string; settingsKeys: string[]; issuer: string; tokenType: string; accessToken: string };
    expect(result).toMatchObject({ createdStatus: 201, createdId: tenantId, issuer: `https://localhost:${started.port}/` });
    expect(result.settingsKeys.length).toBeGreaterThan(0);
    expect(result.tokenType.toLowerCase()).toBe("bearer");
    expect(result.accessToken).toMatch(/^ey/);

    // The tenant just created answers on its own https host with a certificate valid for that very name.
    const ca = readFileSync(caPath, "utf8");
    const res = await getStrict(`${tenantId}.localhost`, started.port, "/.well-known/openid-configuration", ca);
    expect(res.status).toBe(200);
    expect((JSON.parse(res.body) as { issuer: string }).issuer).toBe(`https://${tenantId}.localhost:${started.port}/`);
  });

  it("is refused by the same program when Node does not trust the development CA", async () => {
    const failed = await sdkRun({ GATEHOUSE_TENANT_ID: "untrusted" }).then(
      () => null,
      (error: { stderr: string }) => error,
    );
    expect(failed?.stderr).toMatch(/SELF_SIGNED_CERT_IN_CHAIN|self[- ]signed certificate in certificate chain/i);
  });

  it("prints a curl that works as printed (with --cacert)", async () => {
    const curl = started.lineAfter("Get a management token:");
    expect(curl).toContain(`--cacert ${caPath}`);
    const { stdout } = await run("sh", ["-c", curl]);
    expect((JSON.parse(stdout) as { access_token: string }).access_token).toMatch(/^ey/);
  });
});

/**
 * The TLS front of `--https` against a stand-in for wrangler's listener, which retires idle keep-alive
 * connections (wrangler after 15 s, here after 1.2 s, seen by Node within a second more). auth0-deploy-cli's import compiles its schema for tens of
 * seconds without yielding, then sends its first request on the connection its token request left idle; the
 * front used to close the client's side with wrangler's, and that request failed with "other side closed".
 */
describe("the --https front and connections wrangler retires", () => {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-front-"));
  let upstream: ReturnType<typeof createServer>;
  let front: Awaited<ReturnType<typeof startTlsFront>>;
  let port: number;
  let ca: string;
  let served = 0;

  beforeAll(async () => {
    const devCa = await ensureDevCa(dir);
    const apex = await writeApexLeaf(devCa, dir);
    ca = devCa.certPem;
    upstream = createServer({ key: apex.key, cert: apex.cert, keepAliveTimeout: 1_200 }, (req, res) => {
      served += 1;
      // A response delimited by the close: no length, the connection ends after it.
      if (req.url === "/close-delimited") {
        req.socket.end("HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nuntil the close");
        return;
      }
      res.end(`answer ${served}`);
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    port = await freePort();
    front = await startTlsFront({ port, upstreamPort: (upstream.address() as AddressInfo).port, ca: devCa, apex });
  });

  afterAll(async () => {
    front?.close();
    upstream?.close();
    upstream?.closeAllConnections();
    rmSync(dir, { recursive: true, force: true });
  });

  /** One TLS connection to the front: send raw requests, read what arrives, see whether it ended. */
  function clientConnection() {
    const socket = connect({ host: "127.0.0.1", port, servername: "acme.localhost", ca });
    let received = "";
    let ended = false;
    socket.on("data", (chunk) => (received += chunk));
    socket.on("end", () => (ended = true));
    const request = (path: string) => socket.write(`GET ${path} HTTP/1.1\r\nhost: acme.localhost:${port}\r\n\r\n`);
    return { socket, request, received: () => received, ended: () => ended };
  }

  it("keeps the client's connection when wrangler retires an idle one, and serves its next request", async () => {
    const client = clientConnection();
    client.request("/first");
    await vi.waitFor(() => expect(client.received()).toMatch(/answer \d+$/));
    // Past the upstream's keep-alive: it has closed its side; the client's connection stays usable.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(client.ended()).toBe(false);
    client.request("/second");
    await vi.waitFor(() => expect(client.received().match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2));
    expect(client.ended()).toBe(false);
    client.socket.destroy();
  });

  it("still ends the client's side when the upstream closes right after a response delimited by the close", async () => {
    const client = clientConnection();
    client.request("/close-delimited");
    await vi.waitFor(() => expect(client.ended()).toBe(true));
    expect(client.received()).toMatch(/until the close$/);
    client.socket.destroy();
  });
});
