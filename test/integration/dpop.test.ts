import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { toBase64Url } from "../../src/shared/crypto/encoding";
import { call, createTenant, mgmt, uniqueId } from "../helpers/api";
import { authorize, pkce, redirectParams, seedClient, seedUser, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";

/**
 * Issue 33 point 4: DPoP (RFC 9449). A proof at /oauth/token binds the access token to the proof's key
 * (`cnf.jkt`, `token_type: DPoP`) and a public client's refresh token too; a bound token is used at /userinfo
 * and the management API only in the DPoP scheme with a fresh proof of its key; every faulty proof is the RFC's
 * error, never a 5xx.
 */

const MANAGEMENT = "urn:gatehouse:management";
const CALLBACK = "https://app.example.com/callback";
let tenant: string;
let host: string;
let tokenUrl: string;
let userinfoUrl: string;
let m2m: TestClient;
let spa: TestClient;
let userId: string;

interface DpopKey {
  privateKey: CryptoKey;
  jwk: JWK;
  jkt: string;
}

async function dpopKey(alg = "ES256"): Promise<DpopKey> {
  const pair = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(pair.publicKey);
  return { privateKey: pair.privateKey, jwk, jkt: await calculateJwkThumbprint(jwk) };
}

interface ProofOptions {
  claims?: JWTPayload;
  omit?: string[];
  header?: Record<string, unknown>;
  signWith?: CryptoKey;
  alg?: string;
  accessToken?: string;
}

/** A DPoP proof as a client builds it: typ dpop+jwt, the public jwk, htm, htu, iat now, a random jti. */
async function proof(key: DpopKey, htm: string, htu: string, options: ProofOptions = {}): Promise<string> {
  const claims: JWTPayload = { htm, htu, iat: Math.floor(Date.now() / 1000), jti: crypto.randomUUID(), ...options.claims };
  if (options.accessToken) claims.ath = toBase64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(options.accessToken))));
  for (const name of options.omit ?? []) delete claims[name];
  return new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? "ES256", typ: "dpop+jwt", jwk: key.jwk, ...options.header } as never)
    .sign(options.signWith ?? key.privateKey);
}

const clientCredentials = (headers: Record<string, string> = {}, on = host) =>
  tokenForm({ grant_type: "client_credentials", client_id: m2m.client_id, client_secret: m2m.client_secret, audience: MANAGEMENT }, headers, on);

afterEach(() => setClock());

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  tokenUrl = `http://${host}/oauth/token`;
  userinfoUrl = `http://${host}/userinfo`;
  m2m = await seedClient(tenant, { grant_types: ["client_credentials"] });
  const grant = await mgmt("POST", "/client-grants", { headers: { "tenant-id": tenant }, body: { client_id: m2m.client_id, audience: MANAGEMENT, scope: ["read:clients"] } });
  expect(grant.status).toBe(201);
  spa = await seedClient(tenant, { token_endpoint_auth_method: "none", callbacks: [CALLBACK] });
  userId = (await seedUser(tenant, `${uniqueId("dpop")}@example.com`)).user_id;
});

describe("DPoP at /oauth/token", () => {
  it("binds a client_credentials token to the proof's key: cnf.jkt and token_type DPoP; without a proof, Bearer", async () => {
    const key = await dpopKey();
    const res = await clientCredentials({ dpop: await proof(key, "POST", tokenUrl) });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { access_token: string; token_type: string };
    expect(body.token_type).toBe("DPoP");
    expect(decodeJwt(body.access_token).cnf).toEqual({ jkt: key.jkt });
    const plain = (await (await clientCredentials()).json()) as { access_token: string; token_type: string };
    expect(plain.token_type).toBe("Bearer");
    expect(decodeJwt(plain.access_token).cnf).toBeUndefined();
  });

  it("refuses each faulty proof with 400 invalid_dpop_proof", async () => {
    const key = await dpopKey();
    const other = await dpopKey();
    const { privateKey: _p, ...priv } = { ...(await exportJWK((await generateKeyPair("ES256", { extractable: true })).privateKey)), privateKey: 0 };
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<[string, () => Promise<string>]> = [
      ["wrong htm", () => proof(key, "GET", tokenUrl)],
      ["wrong htu", () => proof(key, "POST", `http://${host}/oauth/par`)],
      ["htu on another host", () => proof(key, "POST", "https://evil.example.com/oauth/token")],
      ["stale iat", () => proof(key, "POST", tokenUrl, { claims: { iat: now - 600 } })],
      ["iat in the future", () => proof(key, "POST", tokenUrl, { claims: { iat: now + 600 } })],
      ["no jti", () => proof(key, "POST", tokenUrl, { omit: ["jti"] })],
      ["no iat", () => proof(key, "POST", tokenUrl, { omit: ["iat"] })],
      ["wrong typ", () => proof(key, "POST", tokenUrl, { header: { typ: "JWT" } })],
      ["no jwk", () => proof(key, "POST", tokenUrl, { header: { jwk: undefined } })],
      ["private jwk", () => proof(key, "POST", tokenUrl, { header: { jwk: priv } })],
      ["signed by another key than its jwk", () => proof(key, "POST", tokenUrl, { signWith: other.privateKey })],
      ["symmetric alg", () => new SignJWT({ htm: "POST", htu: tokenUrl, iat: now, jti: "x" }).setProtectedHeader({ alg: "HS256", typ: "dpop+jwt" }).sign(new Uint8Array(32))],
      ["alg none", async () => `${toBase64Url(new TextEncoder().encode(JSON.stringify({ alg: "none", typ: "dpop+jwt", jwk: key.jwk })))}.${toBase64Url(new TextEncoder().encode(JSON.stringify({ htm: "POST", htu: tokenUrl, iat: now, jti: "n" })))}.`],
      ["garbage", async () => "not-a-jwt"],
    ];
    for (const [name, make] of cases) {
      const res = await clientCredentials({ dpop: await make() });
      expect(res.status, name).toBe(400);
      expect(((await res.json()) as { error: string }).error, name).toBe("invalid_dpop_proof");
    }
    const two = await clientCredentials({ dpop: `${await proof(key, "POST", tokenUrl)}, ${await proof(key, "POST", tokenUrl)}` });
    expect(two.status).toBe(400);
  });

  it("refuses a replayed proof (its jti, for its key)", async () => {
    const key = await dpopKey();
    const once = await proof(key, "POST", tokenUrl);
    expect((await clientCredentials({ dpop: once })).status).toBe(200);
    const again = await clientCredentials({ dpop: once });
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: "invalid_dpop_proof", error_description: expect.stringContaining("already been used") });
  });

  it("asks for a server nonce when the tenant's flag requires one (use_dpop_nonce with DPoP-Nonce), then accepts it", async () => {
    const strict = await createTenant();
    const strictHost = `${strict}.localhost:8787`;
    const flags = await mgmt("PATCH", "/tenants/settings", { headers: { "tenant-id": strict }, body: { flags: { dpop_require_nonce: true } } });
    expect(flags.status, await flags.clone().text()).toBe(200);
    const app = await seedClient(strict, { grant_types: ["client_credentials"] });
    await mgmt("POST", "/client-grants", { headers: { "tenant-id": strict }, body: { client_id: app.client_id, audience: MANAGEMENT, scope: ["read:clients"] } });
    const url = `http://${strictHost}/oauth/token`;
    const ask = (dpop: string) =>
      tokenForm({ grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret, audience: MANAGEMENT }, { dpop }, strictHost);
    const key = await dpopKey();
    const first = await ask(await proof(key, "POST", url));
    expect(first.status).toBe(400);
    expect(await first.json()).toMatchObject({ error: "use_dpop_nonce" });
    const nonce = first.headers.get("dpop-nonce") ?? "";
    expect(nonce).not.toBe("");
    const forged = await ask(await proof(key, "POST", url, { claims: { nonce: `${nonce.split(".")[0]}.AAAA` } }));
    expect(((await forged.json()) as { error: string }).error).toBe("use_dpop_nonce");
    const second = await ask(await proof(key, "POST", url, { claims: { nonce } }));
    expect(second.status, await second.clone().text()).toBe(200);
    expect(second.headers.get("dpop-nonce")).toEqual(expect.any(String));
    // A nonce ages out after its two windows.
    setClock(() => Date.now() + 11 * 60_000);
    const stale = await ask(await proof(key, "POST", url, { claims: { nonce, iat: Math.floor(Date.now() / 1000) + 660 } }));
    expect(((await stale.json()) as { error: string }).error).toBe("use_dpop_nonce");
  });

  it("advertises the proof algorithms in discovery", async () => {
    const discovery = (await (await call("/.well-known/openid-configuration", { host })).json()) as Record<string, string[]>;
    expect(discovery.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(["ES256", "RS256", "EdDSA"]));
    expect(discovery.dpop_signing_alg_values_supported).not.toContain("HS256");
  });
});

/** A code for the public client through an existing session, exchanged with a DPoP proof of `key`. */
async function userTokens(key: DpopKey): Promise<{ access_token: string; refresh_token: string; token_type: string }> {
  const { verifier, challenge } = await pkce();
  const cookie = await sessionCookie(tenant, userId, spa.client_id);
  const res = await authorize(
    { client_id: spa.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid email offline_access", code_challenge: challenge, code_challenge_method: "S256" },
    { cookie, host },
  );
  const code = redirectParams(res).query.get("code") ?? "";
  const exchange = await tokenForm(
    { grant_type: "authorization_code", client_id: spa.client_id, code, redirect_uri: CALLBACK, code_verifier: verifier },
    { dpop: await proof(key, "POST", tokenUrl) },
    host,
  );
  expect(exchange.status, await exchange.clone().text()).toBe(200);
  return (await exchange.json()) as { access_token: string; refresh_token: string; token_type: string };
}

const userinfo = (authorization: string, dpop?: string) => call("/userinfo", { host, headers: { authorization, ...(dpop ? { dpop } : {}) } });

describe("DPoP-bound user tokens", () => {
  it("are used at /userinfo with the DPoP scheme and a proof carrying ath", async () => {
    const key = await dpopKey();
    const tokens = await userTokens(key);
    expect(tokens.token_type).toBe("DPoP");
    const res = await userinfo(`DPoP ${tokens.access_token}`, await proof(key, "GET", userinfoUrl, { accessToken: tokens.access_token }));
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as { sub: string }).sub).toBe(userId);
  });

  it("are refused at /userinfo as a bearer token, without a proof, with a proof of another key, URL or token, and replayed", async () => {
    const key = await dpopKey();
    const other = await dpopKey();
    const { access_token: at } = await userTokens(key);
    const bearer = await userinfo(`Bearer ${at}`);
    expect(bearer.status).toBe(401);
    expect(bearer.headers.get("www-authenticate")).toMatch(/^DPoP error="invalid_token"/);
    const cases: Array<[string, string | undefined, string]> = [
      ["no proof", undefined, "invalid_dpop_proof"],
      ["another key", await proof(other, "GET", userinfoUrl, { accessToken: at }), "invalid_dpop_proof"],
      ["another URL", await proof(key, "GET", tokenUrl, { accessToken: at }), "invalid_dpop_proof"],
      ["no ath", await proof(key, "GET", userinfoUrl), "invalid_dpop_proof"],
      ["ath of another token", await proof(key, "GET", userinfoUrl, { accessToken: `${at}x` }), "invalid_dpop_proof"],
    ];
    for (const [name, dpop, error] of cases) {
      const res = await userinfo(`DPoP ${at}`, dpop);
      expect(res.status, name).toBe(401);
      expect(res.headers.get("www-authenticate"), name).toContain(`DPoP error="${error}"`);
    }
    const once = await proof(key, "GET", userinfoUrl, { accessToken: at });
    expect((await userinfo(`DPoP ${at}`, once)).status).toBe(200);
    expect((await userinfo(`DPoP ${at}`, once)).status).toBe(401);
  });

  it("refuses an unbound token in the DPoP scheme", async () => {
    const { verifier, challenge } = await pkce();
    const cookie = await sessionCookie(tenant, userId, spa.client_id);
    const res = await authorize(
      { client_id: spa.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", code_challenge: challenge, code_challenge_method: "S256" },
      { cookie, host },
    );
    const code = redirectParams(res).query.get("code") ?? "";
    const plain = (await (await tokenForm({ grant_type: "authorization_code", client_id: spa.client_id, code, redirect_uri: CALLBACK, code_verifier: verifier }, {}, host)).json()) as { access_token: string; token_type: string };
    expect(plain.token_type).toBe("Bearer");
    const key = await dpopKey();
    const dpop = await userinfo(`DPoP ${plain.access_token}`, await proof(key, "GET", userinfoUrl, { accessToken: plain.access_token }));
    expect(dpop.status).toBe(401);
    expect((await userinfo(`Bearer ${plain.access_token}`)).status).toBe(200);
  });

  it("bind a public client's refresh token to the key: refused without a proof or with another key, and not spent by it", async () => {
    const key = await dpopKey();
    const other = await dpopKey();
    const tokens = await userTokens(key);
    const refresh = (headers: Record<string, string>) =>
      tokenForm({ grant_type: "refresh_token", client_id: spa.client_id, refresh_token: tokens.refresh_token }, headers, host);
    const attempts: Array<Record<string, string>> = [{}, { dpop: await proof(other, "POST", tokenUrl) }];
    for (const headers of attempts) {
      const refused = await refresh(headers);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ error: "invalid_grant", error_description: expect.stringContaining("DPoP") });
    }
    const rotated = await refresh({ dpop: await proof(key, "POST", tokenUrl) });
    expect(rotated.status, await rotated.clone().text()).toBe(200);
    const body = (await rotated.json()) as { access_token: string; token_type: string };
    expect(body.token_type).toBe("DPoP");
    expect(decodeJwt(body.access_token).cnf).toEqual({ jkt: key.jkt });
  });
});

describe("DPoP at the management API", () => {
  it("accepts a bound token only in the DPoP scheme with a proof of its key for the request", async () => {
    const key = await dpopKey();
    const issued = (await (await clientCredentials({ dpop: await proof(key, "POST", tokenUrl) })).json()) as { access_token: string };
    const at = issued.access_token;
    const url = `http://${host}/api/v2/clients`;
    const list = (authorization: string, dpop?: string) => call("/api/v2/clients", { host, headers: { authorization, ...(dpop ? { dpop } : {}) } });
    const bearer = await list(`Bearer ${at}`);
    expect(bearer.status).toBe(401);
    expect(await bearer.json()).toMatchObject({ errorCode: "invalid_token" });
    expect((await list(`DPoP ${at}`)).status).toBe(401);
    const wrongKey = await list(`DPoP ${at}`, await proof(await dpopKey(), "GET", url, { accessToken: at }));
    expect(await wrongKey.json()).toMatchObject({ statusCode: 401, errorCode: "invalid_dpop_proof" });
    const ok = await list(`DPoP ${at}`, await proof(key, "GET", url, { accessToken: at }));
    expect(ok.status, await ok.clone().text()).toBe(200);
  });
});
