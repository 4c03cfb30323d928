import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { createTenant, mgmt, uniqueId } from "../helpers/api";
import { authorize, pkce, redirectParams, seedClient, seedUser, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";

/**
 * Issue 33 point 4: per API, a setting that requires DPoP (the reference platform's `proof_of_possession`
 * on a resource server). Tokens for such an API are issued only bound to a key: a token request without a
 * proof is 400 invalid_request and spends nothing; other APIs are unaffected.
 */

const CALLBACK = "https://app.example.com/callback";
let tenant: string;
let host: string;
let tokenUrl: string;
let m2m: TestClient;
let web: TestClient;
let userId: string;
const bound = `https://${uniqueId("bound")}.example.com/`;
const plain = `https://${uniqueId("plain")}.example.com/`;

const admin = (method: string, path: string, body?: unknown) => mgmt(method, path, { headers: { "tenant-id": tenant }, ...(body === undefined ? {} : { body }) });

interface DpopKey {
  privateKey: CryptoKey;
  jwk: JWK;
  jkt: string;
}

async function dpopKey(): Promise<DpopKey> {
  const pair = await generateKeyPair("ES256", { extractable: true });
  const jwk = await exportJWK(pair.publicKey);
  return { privateKey: pair.privateKey, jwk, jkt: await calculateJwkThumbprint(jwk) };
}

const proof = (key: DpopKey) =>
  new SignJWT({ htm: "POST", htu: tokenUrl, iat: Math.floor(Date.now() / 1000), jti: crypto.randomUUID() })
    .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk: key.jwk } as never)
    .sign(key.privateKey);

const clientCredentials = (audience: string, headers: Record<string, string> = {}) =>
  tokenForm({ grant_type: "client_credentials", client_id: m2m.client_id, client_secret: m2m.client_secret, audience }, headers, host);

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  tokenUrl = `http://${host}/oauth/token`;
  const created = await admin("POST", "/resource-servers", {
    identifier: bound,
    name: "Bound API",
    allow_offline_access: true,
    scopes: [{ value: "read:things" }],
    proof_of_possession: { mechanism: "dpop", required: true },
  });
  expect(created.status, await created.clone().text()).toBe(201);
  expect(await created.json()).toMatchObject({ identifier: bound, proof_of_possession: { mechanism: "dpop", required: true } });
  expect((await admin("POST", "/resource-servers", { identifier: plain, name: "Plain API", allow_offline_access: true })).status).toBe(201);
  m2m = await seedClient(tenant, { grant_types: ["client_credentials"] });
  for (const audience of [bound, plain]) {
    expect((await admin("POST", "/client-grants", { client_id: m2m.client_id, audience, scope: [] })).status).toBe(201);
  }
  web = await seedClient(tenant, { callbacks: [CALLBACK], grant_types: ["authorization_code", "refresh_token"] });
  userId = (await seedUser(tenant, `${uniqueId("pop")}@example.com`)).user_id;
});

describe("an API whose proof_of_possession requires DPoP", () => {
  it("is shown with its setting; mtls, unknown fields and wrong types are refused with 400; null clears it", async () => {
    const list = (await (await admin("GET", "/resource-servers")).json()) as Array<{ identifier: string; proof_of_possession?: unknown }>;
    expect(list.find((api) => api.identifier === bound)?.proof_of_possession).toEqual({ mechanism: "dpop", required: true });
    expect(list.find((api) => api.identifier === plain)).not.toHaveProperty("proof_of_possession");
    const other = (await (await admin("POST", "/resource-servers", { identifier: `https://${uniqueId("x")}.example.com/` })).json()) as { id: string };
    const refused: Array<[unknown, RegExp]> = [
      [{ proof_of_possession: { mechanism: "mtls", required: true } }, /mtls is not available/],
      [{ proof_of_possession: { mechanism: "dpop", required: "yes" } }, /proof_of_possession/],
      [{ proof_of_possession: { mechanism: "dpop" } }, /proof_of_possession/],
      [{ proof_of_possession: { mechanism: "dpop", required: true, extra: 1 } }, /Additional properties not allowed: extra/],
      [{ proof_of_possession: "dpop" }, /proof_of_possession/],
    ];
    for (const [body, message] of refused) {
      const res = await admin("PATCH", `/resource-servers/${other.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const error = (await res.json()) as { statusCode: number; error: string; message: string };
      expect(error).toMatchObject({ statusCode: 400, error: "Bad Request" });
      expect(error.message, JSON.stringify(body)).toMatch(message);
    }
    expect(await (await admin("GET", `/resource-servers/${other.id}`)).json()).not.toHaveProperty("proof_of_possession");
    const set = await admin("PATCH", `/resource-servers/${other.id}`, { proof_of_possession: { mechanism: "dpop", required: false } });
    expect(await set.json()).toMatchObject({ proof_of_possession: { mechanism: "dpop", required: false } });
    const cleared = await admin("PATCH", `/resource-servers/${other.id}`, { proof_of_possession: null });
    expect(await cleared.json()).not.toHaveProperty("proof_of_possession");
  });

  it("client_credentials: refused without a proof (400 invalid_request), bound with one; another API still takes Bearer", async () => {
    const refused = await clientCredentials(bound);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: "invalid_request", error_description: expect.stringContaining("DPoP") });
    const key = await dpopKey();
    const ok = await clientCredentials(bound, { dpop: await proof(key) });
    expect(ok.status, await ok.clone().text()).toBe(200);
    const body = (await ok.json()) as { access_token: string; token_type: string };
    expect(body.token_type).toBe("DPoP");
    expect(decodeJwt(body.access_token).cnf).toEqual({ jkt: key.jkt });
    const other = await clientCredentials(plain);
    expect(other.status).toBe(200);
    expect(((await other.json()) as { token_type: string }).token_type).toBe("Bearer");
  });

  it("code and refresh: refused without a proof; a refresh refused so is not spent, and rotates with a proof", async () => {
    const codeFor = async () => {
      const { verifier, challenge } = await pkce();
      const cookie = await sessionCookie(tenant, userId, web.client_id);
      const res = await authorize(
        { client_id: web.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access", audience: bound, code_challenge: challenge, code_challenge_method: "S256" },
        { cookie, host },
      );
      return { code: redirectParams(res).query.get("code") ?? "", verifier };
    };
    const exchange = (grant: { code: string; verifier: string }, headers: Record<string, string> = {}) =>
      tokenForm(
        { grant_type: "authorization_code", client_id: web.client_id, client_secret: web.client_secret, code: grant.code, redirect_uri: CALLBACK, code_verifier: grant.verifier },
        headers,
        host,
      );
    const refusedCode = await exchange(await codeFor());
    expect(refusedCode.status).toBe(400);
    expect(await refusedCode.json()).toMatchObject({ error: "invalid_request" });

    const key = await dpopKey();
    const issued = await exchange(await codeFor(), { dpop: await proof(key) });
    expect(issued.status, await issued.clone().text()).toBe(200);
    const tokens = (await issued.json()) as { access_token: string; refresh_token: string; token_type: string };
    expect(tokens.token_type).toBe("DPoP");
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: expect.arrayContaining([bound]), cnf: { jkt: key.jkt } });

    const refresh = (headers: Record<string, string> = {}) =>
      tokenForm({ grant_type: "refresh_token", client_id: web.client_id, client_secret: web.client_secret, refresh_token: tokens.refresh_token }, headers, host);
    const refusedRefresh = await refresh();
    expect(refusedRefresh.status).toBe(400);
    expect(await refusedRefresh.json()).toMatchObject({ error: "invalid_request" });
    const rotated = await refresh({ dpop: await proof(key) });
    expect(rotated.status, await rotated.clone().text()).toBe(200);
    expect(((await rotated.json()) as { token_type: string }).token_type).toBe("DPoP");
  });
});
