import { OAuthError } from "../../../shared/errors";
import type { AuthorizeRequest, TenantConfig } from "../../../shared/types";
import type { ClientRecord } from "../../../shared/schemas/clients";
import { isAllowedRedirect } from "./redirect-uri";
import { clientIn } from "../../tenant/config-cache";

/** Response types served (OAuth 2.0 Multiple Response Types §3, OIDC Core §3). */
export const RESPONSE_TYPES = ["code", "token", "id_token", "id_token token", "code id_token", "code token", "code id_token token"];
export const RESPONSE_MODES = ["query", "fragment", "form_post", "web_message"] as const;

/** An error to deliver to the client's redirect_uri (the request was bound to a valid client and URI). */
export class RedirectableError extends Error {
  constructor(
    readonly error: OAuthError,
    readonly redirectUri: string,
    readonly mode: string,
    readonly state: string | undefined,
  ) {
    super(error.description);
  }
}

const normalizeType = (type: string) => {
  const parts = type.split(" ").filter(Boolean).sort();
  const ordered = ["code", "id_token", "token"].filter((p) => parts.includes(p));
  return ordered.length === parts.length ? ordered.join(" ") : type;
};

const PKCE_CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/;

/**
 * Validates an /authorize query. Until client and redirect_uri are known valid, errors are answered
 * directly (400); after that they go back to the redirect_uri (SPEC §7).
 */
export function parseAuthorizeRequest(
  query: URLSearchParams,
  config: TenantConfig,
  issuer: string,
): { request: AuthorizeRequest; client: ClientRecord; loginTicket?: string } {
  for (const key of new Set(query.keys())) {
    if (query.getAll(key).length > 1) throw new OAuthError("invalid_request", `Parameter "${key}" is repeated`);
  }
  const get = (name: string) => query.get(name) ?? undefined;
  const clientId = get("client_id");
  if (!clientId) throw new OAuthError("invalid_request", "Missing required parameter: client_id");
  const client = clientIn(config, clientId);
  if (!client) throw new OAuthError("invalid_request", `Unknown client: ${clientId}`);
  const redirectUri = get("redirect_uri");
  if (!redirectUri) throw new OAuthError("invalid_request", "Missing required parameter: redirect_uri");
  if (!isAllowedRedirect(client.callbacks, redirectUri, issuer)) {
    throw new OAuthError("invalid_request", `Invalid redirect URI - ${redirectUri}`);
  }

  // web_message posts the response to the redirect_uri's origin from a page that origin may frame (silent
  // authentication of SPAs): only an origin the application registered in web_origins can receive it.
  if (get("response_mode") === "web_message" && !client.web_origins.includes(new URL(redirectUri).origin)) {
    throw new OAuthError("invalid_request", `response_mode=web_message needs ${new URL(redirectUri).origin} in the application's web_origins`);
  }

  const state = get("state");
  const rawType = get("response_type");
  const responseType = rawType ? normalizeType(rawType) : undefined;
  // Only a known type that returns a token from this endpoint changes the default mode to fragment.
  const carriesToken = responseType !== undefined && RESPONSE_TYPES.includes(responseType) && responseType !== "code";
  const defaultMode = carriesToken ? "fragment" : "query";
  const requestedMode = get("response_mode");
  const modeForErrors = requestedMode && (RESPONSE_MODES as readonly string[]).includes(requestedMode) && !(requestedMode === "query" && carriesToken)
    ? requestedMode
    : defaultMode;
  const fail = (code: ConstructorParameters<typeof OAuthError>[0], description: string): never => {
    throw new RedirectableError(new OAuthError(code, description), redirectUri, modeForErrors, state);
  };

  if (!responseType) fail("invalid_request", "Missing required parameter: response_type");
  if (!RESPONSE_TYPES.includes(responseType as string)) fail("unsupported_response_type", `Unsupported response_type: ${rawType}`);
  if (requestedMode && !(RESPONSE_MODES as readonly string[]).includes(requestedMode)) {
    fail("unsupported_response_mode", `Unsupported response_mode: ${requestedMode}`);
  }
  if (requestedMode === "query" && carriesToken) {
    fail("unsupported_response_mode", "response_mode=query cannot carry tokens; use fragment or form_post");
  }
  const grantType = responseType === "code" ? "authorization_code" : "implicit";
  if (client.grant_types.length > 0 && !client.grant_types.includes(grantType)) {
    fail("unauthorized_client", `Grant type '${grantType}' not allowed for the client.`);
  }

  const scope = (get("scope") ?? "openid").split(" ").filter(Boolean).join(" ");
  const nonce = get("nonce");
  if ((responseType as string).includes("id_token") && !nonce) fail("invalid_request", "nonce is required when an ID token is returned from the authorization endpoint");
  if ((responseType as string).includes("id_token") && !scope.split(" ").includes("openid")) {
    fail("invalid_request", "scope must include openid when requesting an ID token");
  }

  const challenge = get("code_challenge");
  const method = get("code_challenge_method") ?? (challenge ? "plain" : undefined);
  if (challenge !== undefined && !PKCE_CHALLENGE.test(challenge)) fail("invalid_request", "code_challenge must be 43-128 characters of [A-Za-z0-9-._~]");
  if (method !== undefined && method !== "S256" && method !== "plain") fail("invalid_request", "code_challenge_method must be S256 or plain");
  if (method !== undefined && challenge === undefined) fail("invalid_request", "code_challenge_method given without code_challenge");
  // RFC 9700 §2.1.1: public clients must use PKCE with S256.
  const isPublic = client.token_endpoint_auth_method === "none";
  if (isPublic && (responseType as string).includes("code") && (challenge === undefined || method !== "S256")) {
    fail("invalid_request", "Public clients must use PKCE with code_challenge_method=S256");
  }

  // The tenant's `default_audience` applies when the request names none (reference platform).
  const defaultAudience = (config.settings as { default_audience?: unknown }).default_audience;
  const audience = get("audience") ?? (typeof defaultAudience === "string" && defaultAudience ? defaultAudience : undefined);
  if (audience && !config.resourceServers.some((r) => r.identifier === audience)) fail("access_denied", `Service not found: ${audience}`);
  // Resolved (and checked against the client's organization_usage) by src/worker/login/organization.ts.
  const organization = get("organization");
  const invitation = get("invitation");

  const maxAgeText = get("max_age");
  const maxAge = maxAgeText === undefined ? undefined : Number(maxAgeText);
  if (maxAge !== undefined && (!Number.isInteger(maxAge) || maxAge < 0)) fail("invalid_request", "max_age must be a non-negative integer");
  const prompt = get("prompt");
  const prompts = prompt?.split(" ").filter(Boolean) ?? [];
  if (prompts.includes("none") && prompts.length > 1) fail("invalid_request", "prompt=none cannot be combined with other values");

  const request: AuthorizeRequest = {
    client_id: client.client_id,
    redirect_uri: redirectUri,
    response_type: responseType as string,
    response_mode: (requestedMode as AuthorizeRequest["response_mode"]) ?? defaultMode,
    scope,
    ...(state !== undefined ? { state } : {}),
    ...(nonce !== undefined ? { nonce } : {}),
    ...(audience ? { audience } : {}),
    ...(organization ? { organization } : {}),
    ...(invitation ? { invitation } : {}),
    ...(prompt ? { prompt } : {}),
    ...(maxAge !== undefined ? { max_age: maxAge } : {}),
    ...(challenge ? { code_challenge: challenge, code_challenge_method: method as "S256" | "plain" } : {}),
    ...(get("screen_hint") ? { screen_hint: get("screen_hint") } : {}),
    ...(get("login_hint") ? { login_hint: get("login_hint") } : {}),
    ...(get("connection") ? { connection: get("connection") } : {}),
    ...(get("ui_locales") ? { ui_locales: get("ui_locales") } : {}),
  };
  const loginTicket = get("login_ticket");
  return { request, client, ...(loginTicket ? { loginTicket } : {}) };
}
