import { decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import { OAuthError } from "../../shared/errors";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { AppContext } from "../context";
import { endSession } from "../login/session";
import { clientIn, tenantConfig } from "../tenant/config-cache";
import { tenantObject } from "../tenant/stubs";
import { clientSecretKey, jwksVerifier } from "../tenant/keys";
import { registeredTarget } from "./authorize/redirect-uri";

const loggedOutPage = "/u2/logged-out";

async function clientById(c: AppContext, clientId: string | undefined): Promise<ClientRecord | undefined> {
  if (!clientId) return undefined;
  return clientIn(await config(c), clientId);
}

const config = (c: AppContext) => tenantConfig(c.var.tenant.id, tenantObject(c.env, c.var.tenant.id), c.var.settings);

/** The tenant-level Allowed Logout URLs (PATCH /api/v2/tenants/settings `allowed_logout_urls`). */
async function tenantLogoutUrls(c: AppContext): Promise<string[]> {
  const urls = (await config(c)).settings.allowed_logout_urls;
  return Array.isArray(urls) ? urls.filter((u): u is string => typeof u === "string") : [];
}

/**
 * The URL to send the browser to: exactly the registered logout URL that matched (issue 6: never the raw
 * parameter, which could carry control characters or a non-canonical spelling into `Location`).
 */
function allowedLogoutUrl(entries: readonly string[] | undefined, url: string, owner = "client"): string {
  const target = entries ? registeredTarget(entries, url) : null;
  if (target === null) {
    throw new OAuthError("invalid_request", `The logout URL is not allowed for this ${owner}: ${JSON.stringify(url).slice(1, -1)}`);
  }
  return target;
}

/** The client's first Allowed Logout URL, unless it is a wildcard pattern (not a place to go). */
function firstLogoutUrl(client: ClientRecord | undefined): string | undefined {
  const first = client?.allowed_logout_urls[0];
  return first && !first.includes("*") ? first : undefined;
}

/**
 * GET /v2/logout (reference platform "Auth0 Logout"): ends the browser session and returns to `returnTo`.
 * With `client_id`, `returnTo` must be one of the client's allowed_logout_urls, and without `returnTo` the
 * browser goes to the first of them (our logged-out page when it has none). Without `client_id`, `returnTo`
 * must be one of the tenant's allowed_logout_urls. The matching rules are the same at both levels.
 * Refresh tokens are not touched (SPEC §3.3).
 */
export async function legacyLogoutEndpoint(c: AppContext): Promise<Response> {
  const returnTo = c.req.query("returnTo");
  const clientId = c.req.query("client_id");
  let target: string;
  if (clientId) {
    const client = await clientById(c, clientId);
    if (returnTo) target = allowedLogoutUrl(client?.allowed_logout_urls, returnTo);
    else target = firstLogoutUrl(client) ?? loggedOutPage;
  } else {
    target = returnTo ? allowedLogoutUrl(await tenantLogoutUrls(c), returnTo, "tenant") : loggedOutPage;
  }
  await endSession(c);
  return c.redirect(target, 302);
}

/**
 * GET /oidc/logout (OpenID Connect RP-Initiated Logout 1.0): id_token_hint identifies the client (its
 * signature is checked; expiry is tolerated), post_logout_redirect_uri must be registered, state is echoed.
 */
export async function oidcLogoutEndpoint(c: AppContext): Promise<Response> {
  const hint = c.req.query("id_token_hint");
  let clientId = c.req.query("client_id");
  if (hint) {
    let aud: unknown;
    try {
      const options = { issuer: c.var.tenant.issuer, currentDate: new Date(0) };
      if (decodeProtectedHeader(hint).alg === "HS256") {
        // An HS256 ID token is signed with its client's secret: the claimed audience names the key to try.
        const claimed = decodeJwt(hint).aud;
        const key = await clientSecretKey(c.env, c.var.settings, c.var.tenant.id, String(Array.isArray(claimed) ? claimed[0] : claimed));
        if (!key) throw new Error("no client secret");
        ({ payload: { aud } } = await jwtVerify(hint, key, { ...options, algorithms: ["HS256"] }));
      } else {
        const { keys, algorithms } = await jwksVerifier(c.env, c.var.settings, c.var.tenant.id);
        ({ payload: { aud } } = await jwtVerify(hint, keys, { ...options, algorithms }));
      }
    } catch {
      throw new OAuthError("invalid_request", "id_token_hint is not an ID token issued by this server");
    }
    const hinted = Array.isArray(aud) ? aud[0] : aud;
    if (clientId && clientId !== hinted) throw new OAuthError("invalid_request", "client_id does not match id_token_hint");
    clientId = String(hinted);
  }
  const requested = c.req.query("post_logout_redirect_uri");
  const client = await clientById(c, clientId);
  const target = requested ? allowedLogoutUrl(client?.allowed_logout_urls, requested) : null;
  await endSession(c);
  if (!target) return c.redirect(loggedOutPage, 302);
  const url = new URL(target);
  const state = c.req.query("state");
  if (state) url.searchParams.set("state", state);
  return c.redirect(url.toString(), 302);
}
