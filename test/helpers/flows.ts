import { env, runInDurableObject } from "cloudflare:test";
import bcrypt from "bcryptjs";
import { toBase64Url } from "../../src/shared/crypto/encoding";
import { fieldCipher } from "../../src/shared/crypto/encryption";
import { randomId, randomToken } from "../../src/shared/crypto/random";
import { hashSecret } from "../../src/worker/login/session";
import { invalidateTenantConfig } from "../../src/worker/tenant/config-cache";
import { BASE, call } from "./api";

export interface TestClient {
  client_id: string;
  client_secret: string;
}

/**
 * Inserts a client row directly (with its secret encrypted as the service does), so flow tests do not depend
 * on the clients management API.
 */
export async function seedClient(
  tenantId: string,
  fields: {
    callbacks?: string[];
    grant_types?: string[];
    token_endpoint_auth_method?: string;
    allowed_logout_urls?: string[];
    web_origins?: string[];
    jwks?: { keys: unknown[] };
    is_first_party?: boolean;
    oidc_conformant?: boolean;
  } = {},
): Promise<TestClient> {
  const clientId = randomId("", 32);
  const secret = randomToken(32);
  const enc = await (await fieldCipher(env.ENCRYPTION_KEY)).encrypt(secret, `client_secret:${clientId}`);
  const now = Date.now();
  await runInDurableObject(env.TENANT.getByName(tenantId), (_o, state) => {
    state.storage.sql.exec(
      `INSERT INTO clients (client_id, name, client_secret_enc, token_endpoint_auth_method, grant_types, callbacks,
        allowed_logout_urls, web_origins, jwks, is_first_party, oidc_conformant, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      clientId,
      "Test app",
      enc,
      fields.token_endpoint_auth_method ?? "client_secret_post",
      JSON.stringify(fields.grant_types ?? []),
      JSON.stringify(fields.callbacks ?? ["https://app.example.com/callback"]),
      JSON.stringify(fields.allowed_logout_urls ?? []),
      JSON.stringify(fields.web_origins ?? []),
      fields.jwks ? JSON.stringify(fields.jwks) : null,
      fields.is_first_party === false ? 0 : 1,
      fields.oidc_conformant === false ? 0 : 1,
      now,
      now,
    );
    state.storage.sql.exec("UPDATE _settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'config_version'");
  });
  invalidateTenantConfig(tenantId);
  return { client_id: clientId, client_secret: secret };
}

/** Creates a database-connection user with a (cheap, cost 4) bcrypt hash. */
export async function seedUser(tenantId: string, email: string, password = "p4ssw0rd!", extra: { blocked?: boolean } = {}) {
  const result = await env.TENANT.getByName(tenantId).users().create({
    user_id: `auth0|${randomId()}`,
    connection: "Username-Password-Authentication",
    email,
    email_verified: true,
    password_hash: await bcrypt.hash(password, 4),
  });
  if (!result.ok) throw new Error(result.error.code);
  if (extra.blocked) {
    await runInDurableObject(env.TENANT.getByName(tenantId), (_o, state) => {
      state.storage.sql.exec("UPDATE users SET blocked = 1 WHERE user_id = ?", result.value.user_id);
    });
  }
  return result.value;
}

/** Starts a browser session for a user directly and returns its cookie header value. */
export async function sessionCookie(
  tenantId: string,
  userId: string,
  clientId: string,
  options: { issuer?: string; expiresAt?: number } = {},
): Promise<string> {
  const id = randomId("ses_");
  const secret = randomToken(32);
  await env.TENANT.getByName(tenantId).sessions().start({
    id,
    secret_hash: await hashSecret(secret),
    user_id: userId,
    client_id: clientId,
    expires_at: options.expiresAt ?? Date.now() + 3_600_000,
    ...(options.issuer ? { issuer: options.issuer } : {}),
  });
  return `gh_session=${id}.${secret}`;
}

/** A PKCE pair (RFC 7636). */
export async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = randomToken(48);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  return { verifier, challenge: toBase64Url(digest) };
}

/** GET /authorize with query parameters, not following redirects. */
export function authorize(params: Record<string, string>, init: { cookie?: string; host?: string } = {}) {
  const url = new URL("/authorize", BASE);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const headers: Record<string, string> = {};
  if (init.cookie) headers.cookie = init.cookie;
  return call(url.pathname + url.search, { headers, host: init.host, redirect: "manual" });
}

/** The parameters of a redirect Location (query or fragment). */
export function redirectParams(res: Response): { url: URL; query: URLSearchParams; fragment: URLSearchParams } {
  const location = res.headers.get("location");
  if (!location) throw new Error(`no Location header (status ${res.status})`);
  const url = new URL(location, BASE);
  return { url, query: url.searchParams, fragment: new URLSearchParams(url.hash.slice(1)) };
}

/** POST /oauth/token form-encoded. */
export function tokenForm(params: Record<string, string>, headers: Record<string, string> = {}, host?: string) {
  return call("/oauth/token", {
    method: "POST",
    host,
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(params).toString(),
  });
}

/**
 * A pending login session as /authorize creates it; returns its id (the `state` of /u2 pages), its CSRF token
 * and the matching CSRF cookie.
 */
export async function pendingLogin(
  tenantId: string,
  clientId: string,
  request: Record<string, string> = {},
  ttlMs = 600_000,
): Promise<{ state: string; csrf: string; cookie: string }> {
  const id = randomId("ls_");
  const csrf = randomToken(24);
  await env.TENANT.getByName(tenantId).logins().start({
    id,
    request: {
      client_id: clientId,
      redirect_uri: "https://app.example.com/callback",
      response_type: "code",
      response_mode: "query",
      scope: "openid profile email",
      state: "xyz",
      ...request,
    },
    csrf_token: csrf,
    expires_at: Date.now() + ttlMs,
  });
  return { state: id, csrf, cookie: `gh_csrf=${csrf}` };
}
