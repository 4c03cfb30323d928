import { now } from "../../shared/clock";
import { randomToken } from "../../shared/crypto/random";
import { OAuthError } from "../../shared/errors";
import type { TenantConfig } from "../../shared/types";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { AppContext } from "../context";
import { readOAuthParams } from "../http/body";
import { hashSecret } from "../login/session";
import { clientIn, tenantConfig } from "../tenant/config-cache";
import { tenantConfigSource, tenantObject } from "../tenant/stubs";
import { parseAuthorizeRequest, RedirectableError } from "./authorize/request";
import { requiresSignedRequestObject, verifyRequestObject } from "./authorize/request-object";
import { authenticateClient, findClient, presentedClient } from "./client-auth";

/** RFC 9126 §2.2: the request_uri's form, and its lifetime (short: the client uses it at once). */
export const REQUEST_URI_PREFIX = "urn:ietf:params:oauth:request_uri:";
export const PUSHED_REQUEST_TTL_S = 60;

/** Parameters that authenticate the client at the PAR endpoint; never stored with the request. */
const CLIENT_AUTH_PARAMS = new Set(["client_secret", "client_assertion", "client_assertion_type"]);

/** The client's `require_pushed_authorization_requests` (RFC 9126 §6), kept in its `extra` settings. */
export const requiresPushedRequests = (client: ClientRecord) => client.extra.require_pushed_authorization_requests === true;

/**
 * POST /oauth/par (RFC 9126 §2): the client authenticates as at the token endpoint, its authorization
 * request is validated as /authorize would (errors answered here, as JSON), then stored for 60 s bound to
 * the client; the answer is 201 with the `request_uri` to send to /authorize.
 */
export async function pushedAuthorizationEndpoint(c: AppContext): Promise<Response> {
  const params = await readOAuthParams(c.req.raw);
  // RFC 9126 §2.1: a pushed request cannot itself refer to one.
  if (params.request_uri !== undefined) throw new OAuthError("invalid_request", "request_uri must not be pushed");
  const tenant = c.var.tenant;
  const config = await tenantConfig(tenant.id, tenantConfigSource(c.env, tenant.id), c.var.settings);
  const presented = presentedClient(c.req.raw, params);
  const client = findClient(config, presented.clientId);
  await authenticateClient(c, client, presented);

  let pushed: Record<string, string> = {};
  if (params.request !== undefined) {
    // RFC 9126 §3: with a request object, its claims are the authorization request (parameters beside it
    // other than client authentication are not used).
    pushed = await verifyRequestObject(c, client, params.request);
  } else {
    if (requiresSignedRequestObject(client)) throw new OAuthError("invalid_request", "This client must send a signed request object (request)");
    for (const [key, value] of Object.entries(params)) if (!CLIENT_AUTH_PARAMS.has(key)) pushed[key] = value;
  }
  pushed.client_id = client.client_id;
  try {
    parseAuthorizeRequest(new URLSearchParams(pushed), config, tenant.issuer);
  } catch (error) {
    // RFC 9126 §2.3: errors are the token endpoint's (RFC 6749 §5.2), never a redirect.
    if (error instanceof RedirectableError) throw error.error;
    throw error;
  }
  const requestUri = `${REQUEST_URI_PREFIX}${randomToken(32)}`;
  await tenantObject(c.env, tenant.id).pushedRequests().push({
    request_uri_hash: await hashSecret(requestUri),
    client_id: client.client_id,
    params: pushed,
    expires_at: now() + PUSHED_REQUEST_TTL_S * 1000,
  });
  return c.json({ request_uri: requestUri, expires_in: PUSHED_REQUEST_TTL_S }, 201, { "Cache-Control": "no-store", Pragma: "no-cache" });
}

/**
 * The parameters an /authorize request stands for (RFC 9126 §4): with a `request_uri`, the pushed request of
 * the same client, consumed once (other query parameters are ignored); without one, the query itself,
 * unless the client requires pushed requests. Failures answer directly (400), never to a redirect_uri.
 */
export async function authorizationQuery(c: AppContext, config: TenantConfig): Promise<URLSearchParams> {
  const query = new URL(c.req.url).searchParams;
  const requestUri = query.get("request_uri");
  const clientId = query.get("client_id");
  const client = clientId ? clientIn(config, clientId) : undefined;
  if (requestUri === null) {
    if (client && requiresPushedRequests(client)) throw new OAuthError("invalid_request", "This client must use pushed authorization requests");
    return requestObjectQuery(c, query, client);
  }
  if (query.has("request")) throw new OAuthError("invalid_request", "request and request_uri cannot be used together");
  if (query.getAll("request_uri").length > 1) throw new OAuthError("invalid_request", 'Parameter "request_uri" is repeated');
  if (!clientId) throw new OAuthError("invalid_request", "Missing required parameter: client_id");
  if (!client) throw new OAuthError("invalid_request", `Unknown client: ${clientId}`);
  if (!requestUri.startsWith(REQUEST_URI_PREFIX)) throw new OAuthError("invalid_request_uri", "request_uri is not a pushed authorization request");
  const outcome = await tenantObject(c.env, c.var.tenant.id).pushedRequests().consume(await hashSecret(requestUri), client.client_id);
  if (!outcome.ok) {
    const reason = outcome.reason === "expired" ? "has expired" : outcome.reason === "consumed" ? "was already used" : "is invalid";
    throw new OAuthError("invalid_request_uri", `request_uri ${reason}`);
  }
  return new URLSearchParams(outcome.params);
}

/**
 * RFC 9101 §5, §6: with a `request` parameter, the request object's parameters are the request (client_id in
 * the query must name the client that signed it); without one, the query itself, unless the client must send
 * request objects (`signed_request_object.required`). Failures answer directly (400), never a redirect: the
 * redirect_uri of an unverified request object cannot be trusted.
 */
async function requestObjectQuery(c: AppContext, query: URLSearchParams, client: ClientRecord | undefined): Promise<URLSearchParams> {
  const request = query.get("request");
  if (request === null) {
    if (client && requiresSignedRequestObject(client)) throw new OAuthError("invalid_request", "This client must send a signed request object (request)");
    return query;
  }
  if (query.getAll("request").length > 1) throw new OAuthError("invalid_request", 'Parameter "request" is repeated');
  const clientId = query.get("client_id");
  if (!clientId) throw new OAuthError("invalid_request", "Missing required parameter: client_id");
  if (!client) throw new OAuthError("invalid_request", `Unknown client: ${clientId}`);
  return new URLSearchParams(await verifyRequestObject(c, client, request));
}
