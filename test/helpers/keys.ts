import { createLocalJWKSet, type JWTPayload, jwtVerify } from "jose";
import { expect } from "vitest";
import { CP, call, mgmt, token } from "./api";
import { createClient, grantClient } from "./management";

/** A signing key as the management API presents it. */
export interface KeyBody {
  kid: string;
  alg: string;
  cert: string;
  pkcs7: string;
  fingerprint: string;
  thumbprint: string;
  current: boolean;
  next: boolean;
  previous: boolean;
  revoked: boolean;
  expired: boolean;
  inherited: boolean;
  expires_at: string;
  [field: string]: unknown;
}

export const DAY = 86_400_000;
export const hostOf = (tenantId: string) => `${tenantId}.localhost:8787`;
export const issuerOf = (tenantId: string) => `http://${hostOf(tenantId)}/`;

/** A fresh control-plane token (the cached one would expire when a test moves the clock by days). */
export async function freshControlPlaneToken(): Promise<string> {
  const res = await token({ grant_type: "client_credentials", client_id: CP.clientId, client_secret: CP.clientSecret, audience: CP.audience });
  return ((await res.json()) as { access_token: string }).access_token;
}

/** Management call on a child tenant with a control-plane token. */
export const onTenant = async (tenantId: string, method: string, path: string, body?: unknown) =>
  mgmt(method, path, { headers: { "tenant-id": tenantId }, body, token: await freshControlPlaneToken() });

export async function listKeys(tenantId: string, type = "jwt_signing"): Promise<KeyBody[]> {
  const res = await onTenant(tenantId, "GET", `/keys/signing?type=${type}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as KeyBody[];
}

export async function jwks(tenantId: string): Promise<{ keys: Record<string, unknown>[] }> {
  const res = await call("/.well-known/jwks.json", { host: hostOf(tenantId) });
  expect(res.status).toBe(200);
  return (await res.json()) as { keys: Record<string, unknown>[] };
}

/** A client of the tenant allowed client_credentials to its management API with the given scopes. */
export async function m2mClient(tenantId: string, scopes: string[]) {
  const target = { headers: { "tenant-id": tenantId } };
  const client = await createClient({ app_type: "non_interactive", grant_types: ["client_credentials"] }, target);
  await grantClient(client.client_id, CP.audience, scopes, target);
  return { client_id: client.client_id, client_secret: String(client.client_secret) };
}

/** A client_credentials access token from the tenant's own host. */
export async function issueToken(tenantId: string, client: { client_id: string; client_secret: string }, audience = CP.audience) {
  const res = await token({ grant_type: "client_credentials", ...client, audience }, { host: hostOf(tenantId) });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** Verifies a token with jose against the tenant's JWKS as served now; returns its header kid and claims. */
export async function verifyWithJwks(tenantId: string, jwt: string): Promise<{ kid: string; alg: string; payload: JWTPayload }> {
  const set = createLocalJWKSet((await jwks(tenantId)) as never);
  const { payload, protectedHeader } = await jwtVerify(jwt, set, { issuer: issuerOf(tenantId) });
  return { kid: String(protectedHeader.kid), alg: protectedHeader.alg, payload };
}
