import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { call, createTenant, mgmt } from "../helpers/api";
import { authorize, seedClient, type TestClient, tokenForm } from "../helpers/flows";

/**
 * Issue 33 point 3: JWT-secured authorization requests (RFC 9101). The client signs its authorization request
 * with its registered key (or its secret for HS256) and sends it as `request` to /authorize or /oauth/par;
 * only the signed parameters are used, and every fault is `invalid_request_object`, answered directly.
 */

const CALLBACK = "https://app.example.com/callback";
let tenant: string;
let host: string;
let issuer: string;
let client: TestClient;
let keyless: TestClient;
let jwtClient: TestClient;
let privateKey: CryptoKey;
let strangerKey: CryptoKey;

afterEach(() => setClock());

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  issuer = `http://${host}/`;
  const pair = await generateKeyPair("RS256", { extractable: true });
  privateKey = pair.privateKey;
  strangerKey = (await generateKeyPair("RS256")).privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: "jar-1", alg: "RS256", use: "sig" };
  client = await seedClient(tenant, { jwks: { keys: [jwk] } });
  keyless = await seedClient(tenant);
  jwtClient = await seedClient(tenant, { jwks: { keys: [jwk] }, token_endpoint_auth_method: "private_key_jwt", grant_types: ["client_credentials"] });
});

const codeRequest = (state = "s1") => ({ response_type: "code", redirect_uri: CALLBACK, scope: "openid", state });

interface SignOptions {
  key?: CryptoKey | Uint8Array;
  alg?: string;
  typ?: string;
  claims?: JWTPayload;
  omit?: string[];
}

/** A request object as a client builds it: iss = client_id, aud = issuer, short exp, random jti. */
async function requestObject(who: TestClient, options: SignOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: JWTPayload = { ...codeRequest(), client_id: who.client_id, iss: who.client_id, aud: issuer, iat: now, nbf: now, exp: now + 300, jti: crypto.randomUUID(), ...options.claims };
  for (const name of options.omit ?? []) delete claims[name];
  return new SignJWT(claims).setProtectedHeader({ alg: options.alg ?? "RS256", typ: options.typ ?? "oauth-authz-req+jwt", ...(options.key ? {} : { kid: "jar-1" }) }).sign(options.key ?? privateKey);
}

const par = (who: TestClient, params: Record<string, string>) =>
  call("/oauth/par", {
    method: "POST",
    host,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ client_id: who.client_id, client_secret: who.client_secret, ...params }).toString(),
  });

async function refusal(res: Response, error = "invalid_request_object"): Promise<string> {
  expect(res.status).toBe(400);
  expect(res.headers.get("location")).toBeNull();
  const body = (await res.json()) as { error: string; error_description: string };
  expect(body.error).toBe(error);
  return body.error_description;
}

describe("request objects at /authorize", () => {
  it("uses the signed parameters, not the query's: the login starts with the object's redirect_uri and state", async () => {
    const request = await requestObject(client, { claims: { state: "signed-state" } });
    const res = await authorize({ client_id: client.client_id, request, state: "tampered", redirect_uri: "https://evil.example.com/cb" }, { host });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toMatch(/^\/u2\/login\?state=/);
    // prompt=none inside the object answers at once, to the signed redirect_uri with the signed state.
    const silent = await authorize({ client_id: client.client_id, request: await requestObject(client, { claims: { prompt: "none", state: "signed" } }) }, { host });
    const location = new URL(silent.headers.get("location") ?? "");
    expect(location.origin + location.pathname).toBe(CALLBACK);
    expect(location.searchParams.get("state")).toBe("signed");
    expect(location.searchParams.get("error")).toBe("login_required");
  });

  it("accepts HS256 objects signed with the client secret", async () => {
    const res = await authorize({ client_id: keyless.client_id, request: await requestObject(keyless, { alg: "HS256", key: new TextEncoder().encode(keyless.client_secret) }) }, { host });
    expect(res.status).toBe(302);
  });

  it("refuses each faulty claim with invalid_request_object, directly (never a redirect), never a 5xx", async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<[string, SignOptions]> = [
      ["wrong iss", { claims: { iss: keyless.client_id } }],
      ["missing iss", { omit: ["iss"] }],
      ["wrong aud", { claims: { aud: "https://other.example.com/" } }],
      ["missing aud", { omit: ["aud"] }],
      ["expired", { claims: { exp: now - 60 } }],
      ["not yet valid", { claims: { nbf: now + 600 } }],
      ["issued in the future", { claims: { iat: now + 600, exp: now + 900 } }],
      ["lifetime over an hour", { claims: { exp: now + 7200 } }],
      ["client_id of another client", { claims: { client_id: keyless.client_id } }],
      ["nested request_uri", { claims: { request_uri: "urn:ietf:params:oauth:request_uri:x" } }],
      ["jti too long", { claims: { jti: "x".repeat(65) } }],
      ["foreign key", { key: strangerKey }],
      ["wrong typ", { typ: "at+jwt" }],
      ["HS256 by a client whose secret does not match", { alg: "HS256", key: new TextEncoder().encode("not-the-secret-but-long-enough-for-hs256") }],
    ];
    for (const [name, options] of cases) {
      const res = await authorize({ client_id: client.client_id, request: await requestObject(client, options) }, { host });
      expect(res.status, name).toBe(400);
      expect(((await res.json()) as { error: string }).error, name).toBe("invalid_request_object");
    }
  });

  it("refuses alg none, encrypted objects and garbage", async () => {
    const body = btoa(JSON.stringify({ ...codeRequest(), iss: client.client_id, aud: issuer })).replace(/=+$/, "");
    const unsigned = `${btoa(JSON.stringify({ alg: "none" })).replace(/=+$/, "")}.${body}.`;
    expect(await refusal(await authorize({ client_id: client.client_id, request: unsigned }, { host }))).toContain("alg none");
    expect(await refusal(await authorize({ client_id: client.client_id, request: "a.b.c.d.e" }, { host }))).toContain("Encrypted");
    await refusal(await authorize({ client_id: client.client_id, request: "not-a-jwt" }, { host }));
    // A client with no registered keys cannot use an asymmetric object.
    await refusal(await authorize({ client_id: keyless.client_id, request: await requestObject(keyless) }, { host }));
  });

  it("uses a jti once (replay refused)", async () => {
    const request = await requestObject(client);
    expect((await authorize({ client_id: client.client_id, request }, { host })).status).toBe(302);
    expect(await refusal(await authorize({ client_id: client.client_id, request }, { host }))).toContain("already been used");
  });

  it("needs client_id in the query, naming the signer; request and request_uri together are refused", async () => {
    const request = await requestObject(client);
    await refusal(await authorize({ request }, { host }), "invalid_request");
    // Signed by client, presented as keyless: keyless's (absent) keys cannot verify it.
    await refusal(await authorize({ client_id: keyless.client_id, request }, { host }));
    await refusal(await authorize({ client_id: client.client_id, request, request_uri: "urn:ietf:params:oauth:request_uri:x" }, { host }), "invalid_request");
  });
});

describe("request objects and client assertions stay apart", () => {
  it("refuses a request object (seen by the browser) as a client_assertion, even shaped like one", async () => {
    const request = await requestObject(jwtClient, { claims: { sub: jwtClient.client_id } });
    const res = await tokenForm(
      { grant_type: "client_credentials", client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", client_assertion: request, audience: "urn:gatehouse:management" },
      {},
      host,
    );
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: "invalid_client", error_description: expect.stringContaining("request object") });
  });
});

describe("request objects pushed to /oauth/par", () => {
  it("stores the object's parameters; /authorize with the request_uri runs them", async () => {
    const pushed = await par(client, { request: await requestObject(client, { claims: { prompt: "none", state: "pushed-signed" } }), state: "outside" });
    expect(pushed.status, await pushed.clone().text()).toBe(201);
    const { request_uri } = (await pushed.json()) as { request_uri: string };
    const res = await authorize({ client_id: client.client_id, request_uri }, { host });
    const location = new URL(res.headers.get("location") ?? "");
    expect(location.origin + location.pathname).toBe(CALLBACK);
    expect(location.searchParams.get("state")).toBe("pushed-signed");
  });

  it("answers a faulty object with invalid_request_object as JSON", async () => {
    await refusal(await par(client, { request: await requestObject(client, { claims: { aud: "https://elsewhere.example.com/" } }) }));
    await refusal(await par(client, { request: await requestObject(client, { key: strangerKey }) }));
  });
});

describe("signed_request_object.required", () => {
  it("is the client's JAR setting in the management API; a required client's plain requests are refused", async () => {
    const pair = await generateKeyPair("PS256", { extractable: true });
    const created = await mgmt("POST", "/clients", {
      headers: { "tenant-id": tenant },
      body: {
        name: "JAR only",
        callbacks: [CALLBACK],
        token_endpoint_auth_method: "client_secret_post",
        jwks: { keys: [{ ...(await exportJWK(pair.publicKey)), alg: "PS256" }] },
        signed_request_object: { required: true },
      },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const app = (await created.json()) as TestClient & { signed_request_object: { required: boolean } };
    expect(app.signed_request_object).toEqual({ required: true });

    expect(await refusal(await authorize({ client_id: app.client_id, ...codeRequest() }, { host }), "invalid_request")).toContain("signed request object");
    expect(await refusal(await par(app, codeRequest()), "invalid_request")).toContain("signed request object");
    const signed = await requestObject(app, { alg: "PS256", key: pair.privateKey });
    expect((await authorize({ client_id: app.client_id, request: signed }, { host })).status).toBe(302);
    const viaPar = await par(app, { request: await requestObject(app, { alg: "PS256", key: pair.privateKey }) });
    expect(viaPar.status).toBe(201);

    const off = await mgmt("PATCH", `/clients/${app.client_id}`, { headers: { "tenant-id": tenant }, body: { signed_request_object: { required: false } } });
    expect(off.status).toBe(200);
    expect((await authorize({ client_id: app.client_id, ...codeRequest() }, { host })).status).toBe(302);
    const bad = await mgmt("PATCH", `/clients/${app.client_id}`, { headers: { "tenant-id": tenant }, body: { signed_request_object: { required: "yes" } } });
    expect(bad.status).toBe(400);
  });

  it("discovery says request objects are supported, with the algorithms verified", async () => {
    const discovery = (await (await call("/.well-known/openid-configuration", { host })).json()) as Record<string, unknown>;
    expect(discovery.request_parameter_supported).toBe(true);
    expect(discovery.request_object_signing_alg_values_supported).toEqual(expect.arrayContaining(["RS256", "PS256", "ES256", "HS256"]));
    expect(discovery.request_object_signing_alg_values_supported).not.toContain("none");
  });
});
