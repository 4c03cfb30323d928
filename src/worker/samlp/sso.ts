/**
 * The SAML 2.0 identity provider of an application (issue 14 point 4):
 * - GET /samlp/metadata/{client_id}: public IdP metadata;
 * - GET and POST /samlp/{client_id}: SP-initiated Web Browser SSO (HTTP-Redirect and HTTP-POST bindings),
 *   through the universal login; the login transaction remembers the AuthnRequest and completes with a
 *   signed SAML response posted to the assertion consumer service instead of a code redirect. Without a
 *   SAMLRequest the login is IdP-initiated, refused unless the application enables it. When the addon has
 *   a `signingCert`, an AuthnRequest must be signed by its key (query signature or enveloped signature).
 */
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { now } from "../../shared/clock";
import { randomId, randomToken } from "../../shared/crypto/random";
import { OAuthError } from "../../shared/errors";
import { type AuthnRequest, decodeSamlRequest, parseAuthnRequest, SamlRequestError } from "../../shared/saml/authn-request";
import { SAML } from "../../shared/saml/constants";
import { type SignatureCheck, verifyPostSignature, verifyRedirectSignature } from "../../shared/saml/request-signature";
import { idpMetadata } from "../../shared/saml/metadata";
import type { SamlpSettings } from "../../shared/schemas/samlp";
import type { AuthorizeRequest, SamlTransaction, TenantConfig } from "../../shared/types";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { AppContext } from "../context";
import { pageSecurityHeaders } from "../login/cookies";
import { mfaFromFirstFactor, ssoNeedsMfa } from "../login/mfa/gate";
import { sendMessage, shellFor } from "../login/render";
import { deviceContext } from "../http/audit";
import { currentSession } from "../login/session";
import { readForm } from "../login/transaction";
import { LOGIN_SESSION_TTL_MS } from "../oauth/authorize/authorize";
import { issueAuthorizationResponse } from "../oauth/authorize/complete";
import { isCanonicalUri, matchesRegistered } from "../oauth/authorize/redirect-uri";
import { tenantCacheHeaders } from "../routing/resolve-tenant";
import { clientIn, tenantConfig } from "../tenant/config-cache";
import { tenantObject } from "../tenant/stubs";
import { metadataCertificates } from "./keys";
import { entityIdOf, samlNoPassiveResponse, samlpSettingsOf, ssoUrlOf } from "./respond";

/** SAML bindings §3.4.3 suggests RelayState of at most 80 bytes; SPs send more, so allow up to this. */
const MAX_RELAY_STATE = 1024;
/** The scopes a SAML login's session stands for (no token is issued from it). */
const SAML_SCOPE = "openid profile email";

function unknownClient(clientId: string): never {
  throw new OAuthError("invalid_request", `Unknown client: ${clientId}`, 404);
}

/** GET /samlp/metadata/{client_id}: public, cacheable for five minutes (keys change on rotation only). */
export async function samlMetadataEndpoint(c: AppContext): Promise<Response> {
  const tenant = c.var.tenant;
  const clientId = c.req.param("client_id") ?? "";
  const config = await tenantConfig(tenant.id, tenantObject(c.env, tenant.id), c.var.settings);
  const client = clientIn(config, clientId);
  if (!client) unknownClient(clientId);
  const certificates = await metadataCertificates(c.env, c.var.settings, tenant.id);
  const xml = idpMetadata({
    entityId: entityIdOf(tenant.issuer, samlpSettingsOf(client as ClientRecord)),
    ssoUrl: ssoUrlOf(tenant.issuer, clientId),
    certificates,
  });
  return c.body(xml, 200, { "Content-Type": "application/xml; charset=utf-8", ...tenantCacheHeaders(tenant, "max-age=300") });
}

/** A refusal shown to the user: the SP's request cannot be answered (no redirect to an unchecked ACS). */
class SamlRefusal extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The ACS a response may be posted to: the request's when registered (callbacks or recipient), else the default. */
function acsFor(client: ClientRecord, settings: SamlpSettings, requested: string | undefined): string {
  const registered = [...client.callbacks, ...(settings.recipient ? [settings.recipient] : [])];
  if (requested !== undefined) {
    const allowed = isCanonicalUri(requested) && /^https?:/i.test(requested) && registered.some((entry) => matchesRegistered(entry, requested));
    if (!allowed) throw new SamlRefusal(400, "INVALID_ACS_URL", `The AssertionConsumerServiceURL is not registered for this application: ${requested}`);
    return requested;
  }
  const fallback = settings.recipient ?? client.callbacks.find((cb) => !cb.includes("*") && /^https?:\/\//i.test(cb));
  if (!fallback) throw new SamlRefusal(400, "NO_ACS_URL", "The application has no callback URL to post the SAML response to");
  return fallback;
}

/** Reads SAMLRequest and RelayState from the query (HTTP-Redirect) or the form body (HTTP-POST). */
async function bindingParams(c: AppContext): Promise<{ samlRequest?: string; relayState?: string }> {
  if (c.req.method === "POST") {
    const form = await readForm(c);
    if (!form) throw new SamlRefusal(400, "INVALID_REQUEST", "The SAML request could not be read");
    return { samlRequest: form.SAMLRequest, relayState: form.RelayState };
  }
  const query = new URL(c.req.url).searchParams;
  for (const name of ["SAMLRequest", "RelayState"]) {
    if (query.getAll(name).length > 1) throw new SamlRefusal(400, "INVALID_REQUEST", `Parameter "${name}" is repeated`);
  }
  return { samlRequest: query.get("SAMLRequest") ?? undefined, relayState: query.get("RelayState") ?? undefined };
}

/** Refuses an AuthnRequest whose signature the application's signingCert requires and does not verify. */
function refuseUnless(check: SignatureCheck): void {
  if (!check.ok) throw new SamlRefusal(400, check.code, check.message);
}

/** Checks an AuthnRequest against this endpoint and the application (saml-core-2.0-os §3.2.1, §3.4.1). */
function checkRequest(c: AppContext, request: AuthnRequest, clientId: string): void {
  if (request.protocolBinding && request.protocolBinding !== SAML.bindingPost) {
    throw new SamlRefusal(400, "UNSUPPORTED_BINDING", `Responses are sent with the HTTP-POST binding only, not ${request.protocolBinding}`);
  }
  if (request.destination) {
    const here = ssoUrlOf(c.var.tenant.issuer, clientId);
    const received = new URL(c.req.url);
    const sameEndpoint = request.destination === here || request.destination === `${received.origin}${received.pathname}`;
    if (!sameEndpoint) throw new SamlRefusal(400, "INVALID_DESTINATION", "The AuthnRequest Destination is not this endpoint");
  }
}

/** GET and POST /samlp/{client_id}. */
export async function samlSsoEndpoint(c: AppContext): Promise<Response> {
  pageSecurityHeaders(c);
  const tenant = c.var.tenant;
  const clientId = c.req.param("client_id") ?? "";
  const stub = tenantObject(c.env, tenant.id);
  const config = await tenantConfig(tenant.id, stub, c.var.settings);
  const client = clientIn(config, clientId);
  if (!client) unknownClient(clientId);
  const app = client as ClientRecord;
  try {
    return await startSamlLogin(c, app, config);
  } catch (error) {
    if (!(error instanceof SamlRefusal) && !(error instanceof SamlRequestError)) throw error;
    const status = error instanceof SamlRefusal ? error.status : 400;
    const code = error instanceof SamlRefusal ? error.code : "INVALID_SAML_REQUEST";
    return sendMessage(c, shellFor(c, config, app.name), { code, title: "Something went wrong", message: error.message }, status);
  }
}

async function startSamlLogin(c: AppContext, client: ClientRecord, config: TenantConfig): Promise<Response> {
  const settings = samlpSettingsOf(client);
  if (!settings) throw new SamlRefusal(403, "SAML_NOT_ENABLED", "SAML is not enabled for this application");
  const { samlRequest, relayState } = await bindingParams(c);
  if (relayState !== undefined && relayState.length > MAX_RELAY_STATE) {
    throw new SamlRefusal(400, "INVALID_REQUEST", `RelayState is longer than ${MAX_RELAY_STATE} characters`);
  }
  let authn: AuthnRequest | null = null;
  if (samlRequest) {
    const signingCert = typeof settings.signingCert === "string" ? settings.signingCert : undefined;
    // HTTP-Redirect carries the signature in the query: checked before anything of the request is read.
    if (signingCert !== undefined && c.req.method !== "POST") refuseUnless(await verifyRedirectSignature(new URL(c.req.url).search.slice(1), signingCert));
    const xml = await decodeSamlRequest(samlRequest);
    authn = parseAuthnRequest(xml);
    if (signingCert !== undefined && c.req.method === "POST") refuseUnless(await verifyPostSignature(xml, signingCert));
    checkRequest(c, authn, client.client_id);
  } else if (!settings.allowIdpInitiated) {
    throw new SamlRefusal(400, "IDP_INITIATED_DISABLED", "IdP-initiated login is not enabled for this application (no SAMLRequest)");
  }
  const saml: SamlTransaction = {
    acs_url: acsFor(client, settings, authn?.assertionConsumerServiceUrl),
    ...(authn ? { request_id: authn.id } : {}),
    ...(authn?.issuer ? { sp_entity_id: authn.issuer } : {}),
    ...(relayState ? { relay_state: relayState } : {}),
  };
  const request: AuthorizeRequest & { samlp: SamlTransaction } = {
    client_id: client.client_id,
    redirect_uri: saml.acs_url,
    response_type: "saml",
    response_mode: "form_post",
    scope: SAML_SCOPE,
    ...(authn?.forceAuthn ? { prompt: "login" } : {}),
    samlp: saml,
  };

  const stub = tenantObject(c.env, c.var.tenant.id);
  const session = authn?.forceAuthn ? null : await currentSession(c);
  const user = session ? await stub.users().get(session.user_id) : null;
  if (session && user && !user.blocked) {
    if (await ssoNeedsMfa(c, config, session.id)) {
      // As at /authorize (SPEC §3.5): under an MFA policy a session that never passed MFA steps up first; the
      // MFA step then completes through the login flow, whose answer is the SAML response. A passive request
      // cannot show the step.
      if (authn?.isPassive) return samlNoPassiveResponse(c, saml, client);
      const stepUp = await mfaFromFirstFactor(c, request, { user_id: user.user_id }, ["pwd"]);
      if (stepUp) return stepUp;
      throw new SamlRefusal(403, "LOGIN_REQUIRED", "The session can no longer be used; log in again");
    }
    await stub.touchSession(session.id, client.client_id, deviceContext(c));
    // The same end as an OIDC login with a session: the organization gate and the post-login actions run on
    // every SSO login too (a deny answers the SP a RequestDenied status), then the SAML response.
    return issueAuthorizationResponse(c, request, client, user, session.id, Math.floor(Date.parse(session.authenticated_at) / 1000));
  }
  // saml-core-2.0-os §3.4.1: a passive request must not show a page; it gets a NoPassive status instead.
  if (authn?.isPassive) return samlNoPassiveResponse(c, saml, client);
  const loginSession = await stub.logins().start({
    id: randomId("ls_"),
    request,
    csrf_token: randomToken(24),
    expires_at: now() + LOGIN_SESSION_TTL_MS,
  });
  return c.redirect(`/u2/login?state=${encodeURIComponent(loginSession.id)}`, 302);
}
