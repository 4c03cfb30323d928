import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/worker/app";
import { resetBootstrap } from "../../src/worker/tenant/bootstrap";
import { invalidateTenantConfig } from "../../src/worker/tenant/config-cache";
import { BASE, CP, call } from "../helpers/api";

const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;

describe("encryption at rest (issue #2 point 8)", () => {
  it("signing keys and client secrets are stored as ciphertext only", async () => {
    await call("/.well-known/jwks.json");
    const row = await runInDurableObject(env.TENANT.getByName(CP.tenantId), (_o, state) => ({
      key: state.storage.sql.exec("SELECT private_jwk_enc FROM signing_keys").one(),
      client: state.storage.sql.exec("SELECT client_secret_enc FROM clients WHERE client_id = ?", CP.clientId).one(),
    }));
    expect(String(row.key.private_jwk_enc)).toMatch(/^enc:v1:/);
    expect(String(row.key.private_jwk_enc)).not.toContain('"d"');
    expect(String(row.client.client_secret_enc)).toMatch(/^enc:v1:/);
    expect(String(row.client.client_secret_enc)).not.toContain(CP.clientSecret);
  });

  it("without ENCRYPTION_KEY requests fail with a clear error instead of using plaintext", async () => {
    resetBootstrap();
    invalidateTenantConfig();
    const app = createApp();
    const res = await app.fetch(new Request(`${BASE}/.well-known/jwks.json`), { ...env, ENCRYPTION_KEY: undefined }, ctx);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error_description: string }).error_description).toMatch(/ENCRYPTION_KEY is not configured/);
    resetBootstrap();
  });

  it("a changed CONTROL_PLANE_CLIENT_SECRET takes effect at the next isolate bootstrap", async () => {
    resetBootstrap();
    const app = createApp();
    const rotated = { ...env, CONTROL_PLANE_CLIENT_SECRET: "rotated-control-plane-secret" };
    const tokenWith = (secret: string) =>
      app.fetch(
        new Request(`${BASE}/oauth/token`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ grant_type: "client_credentials", client_id: CP.clientId, client_secret: secret, audience: CP.audience }),
        }),
        rotated,
        ctx,
      );
    expect((await tokenWith("rotated-control-plane-secret")).status).toBe(200);
    invalidateTenantConfig();
    expect((await tokenWith(CP.clientSecret)).status).toBe(401);
    // Put the original secret back for the other tests of this file's isolate.
    resetBootstrap();
    invalidateTenantConfig();
    expect((await call("/.well-known/jwks.json")).status).toBe(200);
  });
});
