import { createLocalJWKSet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { CP, call, createTenant, mgmt, token } from "../helpers/api";
import { createApi, createClient, grantClient } from "../helpers/management";

const cc = (extra: Record<string, unknown> = {}) => ({
  grant_type: "client_credentials",
  client_id: CP.clientId,
  client_secret: CP.clientSecret,
  audience: CP.audience,
  ...extra,
});

describe("client_credentials at POST /oauth/token", () => {
  it("issues an RS256 access token verifiable with the tenant JWKS, issuer = ISSUER verbatim", async () => {
    const res = await token(cc());
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = (await res.json()) as { access_token: string; token_type: string; expires_in: number; scope: string };
    expect(body.token_type).toBe("Bearer");
    expect(body.expires_in).toBe(86400);
    expect(body.scope.split(" ")).toContain("create:tenants");
    const jwks = (await (await call("/.well-known/jwks.json")).json()) as { keys: JsonWebKey[] };
    const { payload, protectedHeader } = await jwtVerify(body.access_token, createLocalJWKSet(jwks as never), {
      issuer: CP.issuer,
      audience: CP.audience,
    });
    expect(protectedHeader.alg).toBe("RS256");
    expect(payload).toMatchObject({ sub: `${CP.clientId}@clients`, azp: CP.clientId, tenant_id: CP.tenantId, gty: "client-credentials" });
  });

  it("accepts form bodies and client_secret_basic", async () => {
    const res = await call("/oauth/token", {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${btoa(`${CP.clientId}:${CP.clientSecret}`)}`,
      },
      body: new URLSearchParams({ grant_type: "client_credentials", audience: CP.audience }).toString(),
    });
    expect(res.status).toBe(200);
  });

  it("narrows to requested scopes and refuses scopes never granted", async () => {
    const narrowed = (await (await token(cc({ scope: "read:tenants" }))).json()) as { scope: string };
    expect(narrowed.scope).toBe("read:tenants");
    const refused = await token(cc({ scope: "read:tenants launch:missiles" }));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: "access_denied", error_description: "Client has not been granted scopes: launch:missiles" });
  });

  it("answers invalid_client 401 for a wrong secret and an unknown client", async () => {
    const wrong = await token(cc({ client_secret: "nope" }));
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: string }).error).toBe("invalid_client");
    const unknown = await token(cc({ client_id: "who" }));
    expect(unknown.status).toBe(401);
  });

  it("sends WWW-Authenticate when Basic authentication fails", async () => {
    const res = await call("/oauth/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${btoa(`${CP.clientId}:bad`)}` },
      body: "grant_type=client_credentials&audience=urn%3Agatehouse%3Amanagement",
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Basic/);
  });

  it("answers unauthorized_client for a grant outside the allowlist, even with a wrong secret", async () => {
    const api = await createApi(["read:things"]);
    const codeOnly = await createClient({ grant_types: ["authorization_code"] });
    await grantClient(codeOnly.client_id, api.identifier, ["read:things"]);
    // SPEC §4.1 rule 2: the allowlist is checked before the secret, so a wrong secret still hears why.
    const refused = await token({ grant_type: "client_credentials", client_id: codeOnly.client_id, client_secret: "wrong", audience: api.identifier });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe("unauthorized_client");
    // Even the right secret does not get a token for a grant outside the allowlist.
    const right = await token({ grant_type: "client_credentials", client_id: codeOnly.client_id, client_secret: codeOnly.client_secret, audience: api.identifier });
    expect(((await right.json()) as { error: string }).error).toBe("unauthorized_client");

    // An empty allowlist allows every grant: with a client grant, client_credentials issues a token.
    const open = await createClient({ grant_types: [] });
    await grantClient(open.client_id, api.identifier, ["read:things"]);
    const issued = await token({ grant_type: "client_credentials", client_id: open.client_id, client_secret: open.client_secret, audience: api.identifier });
    expect(issued.status).toBe(200);
    expect(await issued.json()).toMatchObject({ token_type: "Bearer", scope: "read:things" });
  });

  it("answers unsupported_grant_type and invalid_request for missing grant_type", async () => {
    const unsupported = await token({ grant_type: "urn:example:magic", client_id: CP.clientId });
    expect(unsupported.status).toBe(400);
    expect(((await unsupported.json()) as { error: string }).error).toBe("unsupported_grant_type");
    const missing = await token({ client_id: CP.clientId });
    expect(((await missing.json()) as { error: string }).error).toBe("invalid_request");
  });

  it("refuses an audience with no resource server or no client grant", async () => {
    const res = await token(cc({ audience: "https://api.example.com/" }));
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: "access_denied", error_description: "Service not found: https://api.example.com/" });
  });

  it("answers malformed bodies with invalid_request, never 500", async () => {
    for (const [type, body] of [
      ["application/json", "{not json"],
      ["application/json", "[1,2]"],
      ["application/json", '{"grant_type":{"a":1}}'],
      ["text/plain", "grant_type=client_credentials"],
      ["application/x-www-form-urlencoded", "grant_type=client_credentials&grant_type=client_credentials"],
    ]) {
      const res = await call("/oauth/token", { method: "POST", headers: { "content-type": type as string }, body });
      expect(res.status, `${type} ${body}`).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_request");
    }
  });

  it("refuses oversized bodies with 413", async () => {
    const res = await token(cc({ padding: "x".repeat(200 * 1024) }));
    expect(res.status).toBe(413);
  });
});

describe("JWKS and discovery", () => {
  it("publishes only public key members with a long max-age", async () => {
    const res = await call("/.well-known/jwks.json");
    expect(res.headers.get("cache-control")).toMatch(/max-age=86400/);
    const { keys } = (await res.json()) as { keys: Record<string, string>[] };
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      expect(key.kty).toBe("RSA");
      for (const secret of ["d", "p", "q", "dp", "dq", "qi"]) expect(key[secret]).toBeUndefined();
    }
  });

  it("discovery issuer is ISSUER verbatim on the apex and the subdomain origin on a tenant host", async () => {
    const apex = (await (await call("/.well-known/openid-configuration")).json()) as { issuer: string; jwks_uri: string };
    expect(apex.issuer).toBe("http://localhost:8787/");
    expect(apex.jwks_uri).toBe("http://localhost:8787/.well-known/jwks.json");
    const id = await createTenant();
    const child = (await (await call("/.well-known/openid-configuration", { host: `${id}.localhost:8787` })).json()) as {
      issuer: string;
    };
    expect(child.issuer).toBe(`http://${id}.localhost:8787/`);
  });

  it("each tenant has its own signing key", async () => {
    const id = await createTenant();
    const apexKeys = (await (await call("/.well-known/jwks.json")).json()) as { keys: { kid: string }[] };
    const childKeys = (await (await call("/.well-known/jwks.json", { host: `${id}.localhost:8787` })).json()) as {
      keys: { kid: string }[];
    };
    expect(childKeys.keys).toHaveLength(1);
    expect(apexKeys.keys.map((k) => k.kid)).not.toContain(childKeys.keys[0]?.kid);
  });

  it("answer a strong ETag, 304 to a conditional GET that holds it, and a new ETag once the document changes", async () => {
    const id = await createTenant();
    const host = `${id}.localhost:8787`;
    const headers = { "tenant-id": id };
    for (const path of ["/.well-known/jwks.json", "/.well-known/openid-configuration"]) {
      const first = await call(path, { host });
      expect(first.status).toBe(200);
      expect(first.headers.get("content-type")).toBe("application/json");
      const etag = first.headers.get("etag") as string;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
      const body = await first.text();
      // The same bytes again, with the same validator.
      const again = await call(path, { host });
      expect(again.headers.get("etag")).toBe(etag);
      expect(await again.text()).toBe(body);
      const held = await call(path, { host, headers: { "if-none-match": `"other", W/${etag}` } });
      expect(held.status).toBe(304);
      expect(await held.text()).toBe("");
      expect(held.headers.get("etag")).toBe(etag);
      expect(held.headers.get("cache-control")).toBe(first.headers.get("cache-control"));
      const stale = await call(path, { host, headers: { "if-none-match": '"other"' } });
      expect(stale.status).toBe(200);
      expect(await stale.text()).toBe(body);
    }
    // A configuration change reaches both documents: a new signing key, a setting that discovery shows.
    const jwksBefore = await call("/.well-known/jwks.json", { host });
    const discoveryBefore = await call("/.well-known/openid-configuration", { host });
    expect((await mgmt("POST", "/keys/signing/rotate", { headers })).status).toBe(201);
    const off = await mgmt("PATCH", "/tenants/settings", { headers, body: { oidc_logout: { rp_logout_end_session_endpoint_discovery: false } } });
    expect(off.status).toBe(200);
    const jwksAfter = await call("/.well-known/jwks.json", { host });
    expect(jwksAfter.headers.get("etag")).not.toBe(jwksBefore.headers.get("etag"));
    const kids = ((await jwksAfter.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
    expect(kids.length).toBeGreaterThan(((await jwksBefore.json()) as { keys: unknown[] }).keys.length);
    const discoveryAfter = await call("/.well-known/openid-configuration", { host, headers: { "if-none-match": discoveryBefore.headers.get("etag") as string } });
    expect(discoveryAfter.status).toBe(200);
    expect(((await discoveryAfter.json()) as { end_session_endpoint?: string }).end_session_endpoint).toBeUndefined();
  });
});
