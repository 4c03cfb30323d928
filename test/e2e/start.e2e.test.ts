import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localFetch } from "../../scripts/e2e-server.mjs";
import { type StartedScript, startScript } from "./helpers/start-script";

const run = promisify(execFile);

/**
 * `PORT=x npm start`, as a newcomer runs it (issue 27): the real scripts/start.mjs on a free port. Regression:
 * with the development message sink on (the default) the script never passed ISSUER, so the worker kept
 * wrangler.toml's `http://localhost:8787/`: the banner's curl pointed at 8787 and every `{id}.localhost:x`
 * answered 404 tenant_not_found.
 */
describe.each([
  { topology: "single worker", args: [] },
  // The dispatcher in front of the control plane (issue 16), with a first release built into the temp store.
  { topology: "--dispatcher", args: ["--dispatcher"] },
])("npm start on another PORT ($topology)", ({ args }) => {
  let started: StartedScript;

  beforeAll(async () => {
    started = await startScript(args);
  }, 240_000);

  afterAll(async () => {
    await started?.stop();
  });

  it("prints and serves the issuer of the chosen port", async () => {
    const issuer = `http://localhost:${started.port}/`;
    expect(started.field("Issuer:")).toBe(issuer);
    const discovery = (await (await fetch(`${issuer}.well-known/openid-configuration`)).json()) as { issuer: string; token_endpoint: string };
    expect(discovery.issuer).toBe(issuer);
    expect(discovery.token_endpoint).toBe(`${issuer}oauth/token`);
    expect(started.field("Child tenants:")).toBe(`http://{tenant_id}.localhost:${started.port}/`);
  });

  it("gets a management token with the printed curl, and a tenant it creates answers on its subdomain", async () => {
    const curl = started.lineAfter("Get a management token:");
    expect(curl).toContain(`http://localhost:${started.port}/oauth/token`);
    const { stdout } = await run("sh", ["-c", curl]);
    const token = (JSON.parse(stdout) as { access_token: string }).access_token;
    expect(token).toMatch(/^ey/);

    const tenantId = `port-${Date.now().toString(36)}`;
    const created = await fetch(`http://localhost:${started.port}/api/v2/tenants`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ id: tenantId }),
    });
    expect(created.status).toBe(201);

    const tenantBase = `http://${tenantId}.localhost:${started.port}/`;
    const res = await localFetch(`${tenantBase}.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { issuer: string }).issuer).toBe(tenantBase);
  });
});
