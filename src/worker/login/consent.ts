import { now } from "../../shared/clock";
import { randomId, randomToken } from "../../shared/crypto/random";
import type { AuthorizeRequest, TenantConfig } from "../../shared/types";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { AppContext } from "../context";
import { tenantObject } from "../tenant/stubs";

/**
 * Consent (issue 29 point 2): when a client must ask the user before it gets scopes, and the pending consent
 * transaction. A third-party application (`is_first_party: false`) asks for every scope the user has not
 * yet granted it for the audience; `prompt=consent` asks any application again for all it requests. A
 * grant is stored per user, client and audience (`/api/v2/grants`); the OIDC scopes of a request without
 * an API are granted for the tenant's `/userinfo` audience, as on the reference platform.
 */

/** How long the consent page stays answerable. */
const CONSENT_TTL_MS = 15 * 60 * 1000;

/**
 * The id prefix of a consent transaction. /u2/consent answers only these: a login transaction (`ls_`, what
 * /authorize opens for prompt=login, max_age or a session that must step up to MFA) is never answered from
 * the browser's session there, which would skip the login or the second factor it was opened for.
 */
const CONSENT_PREFIX = "lc_";

/** Whether a `state` names a consent transaction (opened by {@link redirectToConsent}). */
export const isConsentState = (state: string | undefined): boolean => typeof state === "string" && state.startsWith(CONSENT_PREFIX);

/** The OIDC scopes' wording on the consent page (an API's scopes carry their own descriptions). */
const OIDC_SCOPES: Record<string, string> = {
  profile: "Your profile: name, nickname and picture",
  email: "Your email address",
  address: "Your address",
  phone: "Your phone number",
  offline_access: "Stay signed in (access while you are away)",
};

/** What the user is asked to grant. */
export interface ConsentNeed {
  audience: string;
  scopes: { value: string; description: string }[];
}

/** The audience a request's grant is stored under: its API, or the tenant's /userinfo. */
export const consentAudience = (request: AuthorizeRequest, issuer: string) => request.audience ?? `${issuer.replace(/\/?$/, "/")}userinfo`;

/** The scopes the request asks the user for, each with the words the page shows. `openid` needs no consent. */
export function requestedScopes(config: TenantConfig, request: AuthorizeRequest): ConsentNeed["scopes"] {
  const api = request.audience ? config.resourceServers.find((r) => r.identifier === request.audience) : undefined;
  const seen = new Set<string>();
  const out: ConsentNeed["scopes"] = [];
  for (const value of (request.scope ?? "").split(" ")) {
    if (!value || value === "openid" || seen.has(value)) continue;
    seen.add(value);
    out.push({ value, description: api?.scopes.find((s) => s.value === value)?.description || OIDC_SCOPES[value] || value });
  }
  return out;
}

/**
 * What the user must still grant before this request is answered, or null when nothing. A SAML login asks
 * nothing (its attributes are the application's configuration).
 */
export async function consentNeeded(c: AppContext, config: TenantConfig, client: ClientRecord, request: AuthorizeRequest, userId: string): Promise<ConsentNeed | null> {
  if (request.samlp) return null;
  const forced = (request.prompt ?? "").split(" ").includes("consent");
  if (!forced && client.is_first_party) return null;
  const audience = consentAudience(request, c.var.tenant.issuer);
  const scopes = requestedScopes(config, request);
  if (forced) return { audience, scopes };
  const granted = new Set(await tenantObject(c.env, c.var.tenant.id).userGrants().granted(userId, client.client_id, audience));
  const missing = scopes.filter((s) => !granted.has(s.value));
  if (missing.length) return { audience, scopes: missing };
  if (scopes.length) return null;
  // A request for `openid` alone is still asked once: the application learns who the user is.
  return (await hasAnyGrant(c, userId, client.client_id, audience)) ? null : { audience, scopes: [] };
}

async function hasAnyGrant(c: AppContext, userId: string, clientId: string, audience: string): Promise<boolean> {
  const page = await tenantObject(c.env, c.var.tenant.id).userGrants().list({ offset: 0, limit: 1 }, { user_id: userId, client_id: clientId, audience });
  return page.items.length > 0;
}

/**
 * Opens the consent transaction of a request (a login session the consent page names in `?state=`, its
 * own CSRF token) and sends the browser to the page. `prompt=consent` is dropped from the request it holds:
 * once answered, the request is not asked again.
 */
export async function redirectToConsent(c: AppContext, request: AuthorizeRequest): Promise<Response> {
  const prompt = (request.prompt ?? "").split(" ").filter((p) => p && p !== "consent" && p !== "login").join(" ");
  const { prompt: _dropped, ...rest } = request;
  const consentSession = await tenantObject(c.env, c.var.tenant.id)
    .logins()
    .start({ id: randomId(CONSENT_PREFIX), request: { ...rest, ...(prompt ? { prompt } : {}) }, csrf_token: randomToken(24), expires_at: now() + CONSENT_TTL_MS });
  return c.redirect(`/u2/consent?state=${encodeURIComponent(consentSession.id)}`, 302);
}
