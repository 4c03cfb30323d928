import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant, mgmt } from "../helpers/api";
import { authorize, pkce, redirectParams, seedClient, seedUser, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";

/**
 * Issue 33 point 6: discovery lists exactly what the tenant supports. Each advertised field is checked
 * against what the server does for that tenant: every endpoint answers, every grant type is served (and one
 * not listed is unsupported_grant_type), every response type, mode, PKCE method and prompt is accepted, every
 * request-object and DPoP algorithm verifies; the per-tenant fields follow the tenant's configuration.
 */

const CALLBACK = "https://app.example.com/callback";
const MANAGEMENT = "urn:gatehouse:management";
type Discovery = Record<string, unknown> & { grant_types_supported: string[] };

let tenant: string;
let host: string;
let issuer: string;
let client: TestClient;
let cookie: string;

const discovery = async (on = host) => (await (await call("/.well-known/openid-configuration", { host: on })).json()) as Discovery;
const list = (d: Discovery, field: string) => d[field] as string[];

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  issuer = `http://${host}/`;
  client = await seedClient(tenant, { web_origins: ["https://app.example.com"] });
  const user = await seedUser(tenant, `disco-${crypto.randomUUID().slice(0, 8)}@example.com`);
  cookie = await sessionCookie(tenant, user.user_id, client.client_id);
});

describe("discovery against behaviour", () => {
  it("names only endpoints that exist on this tenant's host", async () => {
    const d = await discovery();
    const endpoints: Array<[string, string]> = [
      ["authorization_endpoint", "GET"],
      ["token_endpoint", "POST"],
      ["userinfo_endpoint", "GET"],
      ["jwks_uri", "GET"],
      ["revocation_endpoint", "POST"],
      ["device_authorization_endpoint", "POST"],
      ["pushed_authorization_request_endpoint", "POST"],
      ["end_session_endpoint", "GET"],
    ];
    for (const [field, method] of endpoints) {
      const url = new URL(d[field] as string);
      expect(`${url.origin}/`, field).toBe(issuer);
      const res = await call(url.pathname, { method, host, redirect: "manual", ...(method === "POST" ? { headers: { "content-type": "application/x-www-form-urlencoded" }, body: "" } : {}) });
      expect(res.status, `${field} ${res.status}`).not.toBe(404);
      expect(res.status, field).toBeLessThan(500);
    }
  });

  it("serves every grant type it lists, and no other", async () => {
    const d = await discovery();
    for (const grantType of d.grant_types_supported.filter((g) => g !== "implicit")) {
      const res = await tokenForm({ grant_type: grantType, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
      expect(((await res.json()) as { error: string }).error, grantType).not.toBe("unsupported_grant_type");
    }
    for (const unlisted of ["password", "http://auth0.com/oauth/grant-type/passwordless/otp", "urn:example:nothing"]) {
      expect(d.grant_types_supported).not.toContain(unlisted);
      const res = await tokenForm({ grant_type: unlisted, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
      expect(((await res.json()) as { error: string }).error, unlisted).toBe("unsupported_grant_type");
    }
  });

  it("accepts every response type, response mode, PKCE method and prompt it lists", async () => {
    const d = await discovery();
    const { challenge } = await pkce();
    const attempts: Record<string, string>[] = [
      ...list(d, "response_types_supported").map((response_type) => ({ response_type, nonce: "n" })),
      ...list(d, "response_modes_supported").map((response_mode) => ({ response_type: "code", response_mode })),
      ...list(d, "code_challenge_methods_supported").map((method) => ({ response_type: "code", code_challenge: method === "plain" ? "p".repeat(43) : challenge, code_challenge_method: method })),
      ...list(d, "prompt_values_supported").map((prompt) => ({ response_type: "code", prompt })),
    ];
    for (const extra of attempts) {
      const res = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, scope: "openid", state: "s", ...extra }, { cookie, host });
      expect(res.status, JSON.stringify(extra)).toBeLessThan(500);
      const location = res.headers.get("location");
      if (res.status === 302 && location?.startsWith(CALLBACK)) {
        const { query, fragment } = redirectParams(res);
        const error = query.get("error") ?? fragment.get("error");
        expect(["unsupported_response_type", "unsupported_response_mode", "invalid_request"], JSON.stringify(extra)).not.toContain(error);
      } else {
        // web_message and form_post answer with a page; a login page is a redirect to /u2.
        expect([200, 302], JSON.stringify(extra)).toContain(res.status);
      }
    }
  });

  it("verifies request objects in every algorithm it lists", async () => {
    const d = await discovery();
    const asymmetric = list(d, "request_object_signing_alg_values_supported").filter((alg) => !alg.startsWith("HS"));
    // One key per algorithm (a WebCrypto key is bound to its algorithm and hash), named by kid.
    const pairs = new Map(await Promise.all(asymmetric.map(async (alg) => [alg, await generateKeyPair(alg, { extractable: true })] as const)));
    const jwks = { keys: await Promise.all([...pairs].map(async ([alg, pair]) => ({ ...(await exportJWK(pair.publicKey)), kid: alg }))) };
    const signer = await seedClient(tenant, { jwks });
    const secret = new TextEncoder().encode(signer.client_secret);
    for (const alg of list(d, "request_object_signing_alg_values_supported")) {
      const key = alg.startsWith("HS") ? secret : (pairs.get(alg)?.privateKey as CryptoKey);
      const request = await new SignJWT({ response_type: "code", redirect_uri: CALLBACK, scope: "openid", client_id: signer.client_id })
        .setProtectedHeader({ alg, typ: "oauth-authz-req+jwt", ...(alg.startsWith("HS") ? {} : { kid: alg }) })
        .setIssuer(signer.client_id)
        .setAudience(issuer)
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(key);
      const res = await authorize({ client_id: signer.client_id, request }, { host });
      expect(res.status, `${alg}: ${res.status === 400 ? await res.text() : ""}`).toBe(302);
    }
  });

  it("accepts DPoP proofs in every algorithm it lists", async () => {
    const d = await discovery();
    const m2m = await seedClient(tenant, { grant_types: ["client_credentials"] });
    await mgmt("POST", "/client-grants", { headers: { "tenant-id": tenant }, body: { client_id: m2m.client_id, audience: MANAGEMENT, scope: ["read:clients"] } });
    for (const alg of list(d, "dpop_signing_alg_values_supported")) {
      const pair = await generateKeyPair(alg, { extractable: true });
      const proof = await new SignJWT({ htm: "POST", htu: `${issuer}oauth/token`, jti: crypto.randomUUID() })
        .setProtectedHeader({ alg, typ: "dpop+jwt", jwk: await exportJWK(pair.publicKey) })
        .setIssuedAt()
        .sign(pair.privateKey);
      const res = await tokenForm({ grant_type: "client_credentials", client_id: m2m.client_id, client_secret: m2m.client_secret, audience: MANAGEMENT }, { dpop: proof }, host);
      expect(res.status, `${alg}: ${await res.clone().text()}`).toBe(200);
      expect(((await res.json()) as { token_type: string }).token_type).toBe("DPoP");
    }
  });

  it("accepts every token endpoint authentication method it lists as a client setting", async () => {
    const d = await discovery();
    for (const method of list(d, "token_endpoint_auth_methods_supported")) {
      const body = { name: `auth ${method}`, token_endpoint_auth_method: method, ...(method === "private_key_jwt" ? { jwks: { keys: [await exportJWK((await generateKeyPair("RS256", { extractable: true })).publicKey)] } } : {}) };
      const res = await mgmt("POST", "/clients", { headers: { "tenant-id": tenant }, body });
      expect(res.status, `${method}: ${await res.clone().text()}`).toBe(201);
    }
  });
});

describe("fields that follow the tenant's configuration", () => {
  it("lists the passwordless grant only once the tenant has a passwordless connection, which the token endpoint then serves", async () => {
    const own = await createTenant();
    const ownHost = `${own}.localhost:8787`;
    const app = await seedClient(own);
    const grant = "http://auth0.com/oauth/grant-type/passwordless/otp";
    const ask = async () =>
      ((await (await tokenForm({ grant_type: grant, client_id: app.client_id, client_secret: app.client_secret, realm: "email", username: "a@example.com", otp: "123456" }, {}, ownHost)).json()) as { error: string }).error;
    expect((await discovery(ownHost)).grant_types_supported).not.toContain(grant);
    expect(await ask()).toBe("unsupported_grant_type");
    const created = await mgmt("POST", "/connections", { headers: { "tenant-id": own }, body: { name: "email", strategy: "email" } });
    expect(created.status).toBe(201);
    expect((await discovery(ownHost)).grant_types_supported).toContain(grant);
    expect(await ask()).not.toBe("unsupported_grant_type");
  });

  it("names end_session_endpoint unless the tenant turns off rp_logout_end_session_endpoint_discovery", async () => {
    const own = await createTenant();
    const ownHost = `${own}.localhost:8787`;
    expect((await discovery(ownHost)).end_session_endpoint).toBe(`http://${ownHost}/oidc/logout`);
    const off = await mgmt("PATCH", "/tenants/settings", { headers: { "tenant-id": own }, body: { oidc_logout: { rp_logout_end_session_endpoint_discovery: false } } });
    expect(off.status, await off.clone().text()).toBe(200);
    expect((await discovery(ownHost)).end_session_endpoint).toBeUndefined();
    const on = await mgmt("PATCH", "/tenants/settings", { headers: { "tenant-id": own }, body: { oidc_logout: { rp_logout_end_session_endpoint_discovery: true } } });
    expect(on.status).toBe(200);
    expect((await discovery(ownHost)).end_session_endpoint).toBe(`http://${ownHost}/oidc/logout`);
  });
});
