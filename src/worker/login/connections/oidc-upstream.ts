import { createLocalJWKSet, type JSONWebKeySet, type JWTPayload, jwtVerify } from "jose";
import { assertEgress, type EgressPolicy } from "../../../shared/egress-policy";
import type { ConnectionRecord } from "../../../shared/schemas/connections";

/**
 * The upstream side of an enterprise OpenID Connect connection (issue 29 point 0): its discovery document
 * and JWKS (fetched through the egress policy, each cached per connection for {@link CACHE_TTL_MS}), the
 * back-channel code exchange and the ID token's verification (signature by the upstream JWKS, iss, aud,
 * exp, nonce). Every failure is an {@link UpstreamError} the callback turns into the reference's answer.
 */

/** Discovery documents and key sets are reused this long per connection. @default 5 minutes */
export const CACHE_TTL_MS = 5 * 60 * 1000;
/** An upstream call waits this long. @default 5 seconds */
const TIMEOUT_MS = 5000;
/** An upstream answer larger than this is refused. @default 256 KiB */
const MAX_BYTES = 256 * 1024;
/** Signature algorithms accepted for upstream ID tokens (asymmetric only: the JWKS is the trust anchor). */
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];

export class UpstreamError extends Error {
  override name = "UpstreamError";
}

export interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
}

const cache = new Map<string, { at: number; value: unknown }>();

function cached<T>(key: string): T | undefined {
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < CACHE_TTL_MS) return hit.value as T;
  cache.delete(key);
  return undefined;
}

/** One upstream request: checked by the egress policy, no redirects followed, bounded in time and size. */
async function upstreamJson(url: string, egress: EgressPolicy, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  try {
    assertEgress(url, egress);
  } catch (error) {
    throw new UpstreamError((error as Error).message);
  }
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: "manual", signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (error) {
    throw new UpstreamError(`${new URL(url).host} could not be reached: ${(error as Error).message}`);
  }
  const text = await response.text();
  if (text.length > MAX_BYTES) throw new UpstreamError(`${new URL(url).host} answered too much`);
  try {
    const body = JSON.parse(text) as unknown;
    if (!body || typeof body !== "object" || Array.isArray(body)) throw new Error("not an object");
    return { status: response.status, body: body as Record<string, unknown> };
  } catch {
    throw new UpstreamError(`${new URL(url).host} answered ${response.status} without a JSON object`);
  }
}

const isHttpUrl = (value: unknown): value is string => typeof value === "string" && /^https?:\/\//i.test(value);

/** The connection's discovery URL: `discovery_url`, else `{issuer}/.well-known/openid-configuration`. */
export function discoveryUrlOf(options: Record<string, unknown>): string | null {
  if (isHttpUrl(options.discovery_url)) return options.discovery_url;
  if (isHttpUrl(options.issuer)) return `${options.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
  return null;
}

/** The upstream's discovery document (cached), its issuer checked against the connection's when one is set. */
export async function discover(connection: ConnectionRecord, egress: EgressPolicy): Promise<Discovery> {
  const url = discoveryUrlOf(connection.options);
  if (!url) throw new UpstreamError("The connection has no discovery_url or issuer");
  const key = `discovery:${connection.id}:${url}`;
  const hit = cached<Discovery>(key);
  if (hit) return hit;
  const { status, body } = await upstreamJson(url, egress, { headers: { accept: "application/json" } });
  if (status !== 200) throw new UpstreamError(`The discovery document answered ${status}`);
  const doc = body as Partial<Discovery>;
  if (typeof doc.issuer !== "string" || !isHttpUrl(doc.authorization_endpoint) || !isHttpUrl(doc.token_endpoint) || !isHttpUrl(doc.jwks_uri)) {
    throw new UpstreamError("The discovery document lacks issuer, authorization_endpoint, token_endpoint or jwks_uri");
  }
  const expected = connection.options.issuer;
  if (typeof expected === "string" && expected.replace(/\/+$/, "") !== doc.issuer.replace(/\/+$/, "")) {
    throw new UpstreamError("The discovery document names another issuer than the connection's");
  }
  const value: Discovery = {
    issuer: doc.issuer,
    authorization_endpoint: doc.authorization_endpoint,
    token_endpoint: doc.token_endpoint,
    jwks_uri: doc.jwks_uri,
    ...(isHttpUrl(doc.userinfo_endpoint) ? { userinfo_endpoint: doc.userinfo_endpoint } : {}),
  };
  cache.set(key, { at: Date.now(), value });
  return value;
}

async function keySet(connection: ConnectionRecord, discovery: Discovery, egress: EgressPolicy, fresh: boolean) {
  const key = `jwks:${connection.id}:${discovery.jwks_uri}`;
  const hit = fresh ? undefined : cached<JSONWebKeySet>(key);
  if (hit) return createLocalJWKSet(hit);
  const { status, body } = await upstreamJson(discovery.jwks_uri, egress, { headers: { accept: "application/json" } });
  if (status !== 200 || !Array.isArray(body.keys)) throw new UpstreamError(`The JWKS answered ${status} without keys`);
  cache.set(key, { at: Date.now(), value: body });
  return createLocalJWKSet(body as unknown as JSONWebKeySet);
}

/** The code exchange (client_secret_post, PKCE verifier): the upstream's access and ID tokens. */
export async function exchangeCode(
  discovery: Discovery,
  egress: EgressPolicy,
  input: { code: string; redirectUri: string; verifier: string; clientId: string; clientSecret: string },
): Promise<{ id_token: string; access_token?: string }> {
  const form = new URLSearchParams({
    grant_type: "authorization_code",
    code: input.code,
    redirect_uri: input.redirectUri,
    code_verifier: input.verifier,
    client_id: input.clientId,
    client_secret: input.clientSecret,
  });
  const { status, body } = await upstreamJson(discovery.token_endpoint, egress, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    body: form.toString(),
  });
  if (status !== 200) throw new UpstreamError(`The token endpoint refused the code: ${String(body.error ?? status)}`);
  if (typeof body.id_token !== "string") throw new UpstreamError("The token endpoint answered no id_token");
  return { id_token: body.id_token, ...(typeof body.access_token === "string" ? { access_token: body.access_token } : {}) };
}

/**
 * Verifies an upstream ID token: signed by a key of the upstream JWKS (refetched once for an unknown key),
 * issued by the discovery's issuer for this connection's client_id, unexpired, with this login's nonce.
 */
export async function verifyIdToken(connection: ConnectionRecord, discovery: Discovery, egress: EgressPolicy, token: string, expect: { clientId: string; nonce: string }): Promise<JWTPayload> {
  const verify = async (fresh: boolean) =>
    jwtVerify(token, await keySet(connection, discovery, egress, fresh), { issuer: discovery.issuer, audience: expect.clientId, algorithms: ALGORITHMS, clockTolerance: 60 });
  let payload: JWTPayload;
  try {
    payload = (await verify(false)).payload;
  } catch (error) {
    if ((error as { code?: string }).code !== "ERR_JWKS_NO_MATCHING_KEY") throw new UpstreamError(`Invalid ID token: ${(error as Error).message}`);
    try {
      payload = (await verify(true)).payload;
    } catch (again) {
      throw new UpstreamError(`Invalid ID token: ${(again as Error).message}`);
    }
  }
  if (typeof payload.sub !== "string" || !payload.sub) throw new UpstreamError("Invalid ID token: no sub");
  if (payload.nonce !== expect.nonce) throw new UpstreamError("Invalid ID token: the nonce does not match this login");
  if (typeof payload.exp !== "number") throw new UpstreamError("Invalid ID token: no exp");
  return payload;
}

/** The upstream's userinfo for the access token, when it has the same `sub` (claims an ID token may omit). */
export async function userinfo(discovery: Discovery, egress: EgressPolicy, accessToken: string, sub: string): Promise<Record<string, unknown>> {
  if (!discovery.userinfo_endpoint) return {};
  try {
    const { status, body } = await upstreamJson(discovery.userinfo_endpoint, egress, { headers: { authorization: `Bearer ${accessToken}`, accept: "application/json" } });
    return status === 200 && body.sub === sub ? body : {};
  } catch {
    return {};
  }
}
