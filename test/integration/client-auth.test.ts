import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { createTenant } from "../helpers/api";
import { seedClient, type TestClient, tokenForm } from "../helpers/flows";
import { env, runInDurableObject } from "cloudflare:test";
import { invalidateTenantConfig } from "../../src/worker/tenant/config-cache";

const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
let tenant: string;
let host: string;
let tokenUrl: string;
let keyPair: CryptoKeyPair;
let pkjClient: TestClient;
let csjClient: TestClient;

/** A client grant lets these clients use client_credentials against the tenant's management API. */
async function grant(clientId: string) {
  await runInDurableObject(env.TENANT.getByName(tenant), (_o, state) => {
    state.storage.sql.exec(
      "INSERT INTO client_grants (id, client_id, audience, scope, created_at, updated_at) VALUES (?, ?, 'urn:gatehouse:management', '[\"read:users\"]', 0, 0)",
      `cgr_${clientId}`,
      clientId,
    );
    state.storage.sql.exec("UPDATE _settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'config_version'");
  });
  invalidateTenantConfig(tenant);
}

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  tokenUrl = `http://${host}/oauth/token`;
  keyPair = await generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await exportJWK(keyPair.publicKey)), kid: "k1", alg: "ES256" };
  pkjClient = await seedClient(tenant, { token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [jwk] } });
  csjClient = await seedClient(tenant, { token_endpoint_auth_method: "client_secret_jwt" });
  await grant(pkjClient.client_id);
  await grant(csjClient.client_id);
});

function assertion(clientId: string, opts: { jti?: string; iat?: number; exp?: number; aud?: string } = {}) {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({})
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(opts.aud ?? tokenUrl)
    .setJti(opts.jti ?? crypto.randomUUID())
    .setExpirationTime(opts.exp ?? now + 60);
  if (opts.iat !== undefined) jwt.setIssuedAt(opts.iat);
  return jwt;
}

const cc = (clientAssertion: string) =>
  tokenForm({ grant_type: "client_credentials", audience: "urn:gatehouse:management", client_assertion_type: ASSERTION_TYPE, client_assertion: clientAssertion }, {}, host);

describe("private_key_jwt and client_secret_jwt (SPEC §4.1 rule 3)", () => {
  it("private_key_jwt: an assertion signed with the registered key authenticates", async () => {
    const jwt = await assertion(pkjClient.client_id).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(keyPair.privateKey);
    const res = await cc(jwt);
    expect(res.status).toBe(200);
  });

  it("a replayed jti is invalid_client", async () => {
    const jwt = await assertion(pkjClient.client_id, { jti: "same-jti" }).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(keyPair.privateKey);
    expect((await cc(jwt)).status).toBe(200);
    const replay = await cc(jwt);
    expect(replay.status).toBe(401);
    expect(((await replay.json()) as { error: string }).error).toBe("invalid_client");
  });

  it("concurrent use of one assertion: exactly one succeeds", async () => {
    const jwt = await assertion(pkjClient.client_id).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(keyPair.privateKey);
    const statuses = (await Promise.all(Array.from({ length: 10 }, () => cc(jwt)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
  });

  it("more than 300 s between iat and exp (or from now without iat) is refused", async () => {
    const now = Math.floor(Date.now() / 1000);
    const long = await assertion(pkjClient.client_id, { iat: now, exp: now + 301 + 10 }).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(keyPair.privateKey);
    expect((await cc(long)).status).toBe(401);
    const noIat = await assertion(pkjClient.client_id, { exp: now + 600 }).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(keyPair.privateKey);
    expect((await cc(noIat)).status).toBe(401);
    const ok = await assertion(pkjClient.client_id, { iat: now, exp: now + 290 }).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(keyPair.privateKey);
    expect((await cc(ok)).status).toBe(200);
  });

  it("a wrong key, a wrong audience or an expired assertion is invalid_client", async () => {
    const other = await generateKeyPair("ES256");
    const wrongKey = await assertion(pkjClient.client_id).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(other.privateKey);
    expect((await cc(wrongKey)).status).toBe(401);
    const wrongAud = await assertion(pkjClient.client_id, { aud: "https://elsewhere.example/token" }).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(keyPair.privateKey);
    expect((await cc(wrongAud)).status).toBe(401);
    const expired = await assertion(pkjClient.client_id, { exp: Math.floor(Date.now() / 1000) - 120 }).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(keyPair.privateKey);
    expect((await cc(expired)).status).toBe(401);
  });

  it("a private_key_jwt client cannot fall back to a client secret", async () => {
    const res = await tokenForm({ grant_type: "client_credentials", audience: "urn:gatehouse:management", client_id: pkjClient.client_id, client_secret: pkjClient.client_secret }, {}, host);
    expect(res.status).toBe(401);
  });

  it("client_secret_jwt: HS256 with the client secret authenticates; another secret does not", async () => {
    const good = await assertion(csjClient.client_id).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode(csjClient.client_secret));
    expect((await cc(good)).status).toBe(200);
    const bad = await assertion(csjClient.client_id).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode("another-secret-value-0123456789"));
    expect((await cc(bad)).status).toBe(401);
  });

  it("the issuer is accepted as audience too", async () => {
    const jwt = await assertion(pkjClient.client_id, { aud: `http://${host}/` }).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(keyPair.privateKey);
    expect((await cc(jwt)).status).toBe(200);
  });
});
