/**
 * Completing a SAML login (Web Browser SSO profile, saml-profiles-2.0-os §4.1): a signed Response for the
 * authenticated user, delivered by the HTTP-POST binding (saml-bindings-2.0-os §3.5) as a form that the
 * browser submits to the assertion consumer service, with the RelayState it came with.
 */
import { html } from "hono/html";
import { now } from "../../shared/clock";
import { toBase64, utf8 } from "../../shared/crypto/encoding";
import { randomToken } from "../../shared/crypto/random";
import { OAuthError } from "../../shared/errors";
import { DEFAULT_SAML_LIFETIME_S, type SamlpSettings } from "../../shared/schemas/samlp";
import { nameIdentifier, samlAttributes } from "../../shared/saml/profile";
import { SAML } from "../../shared/saml/constants";
import { buildSignedResponse, buildStatusResponse } from "../../shared/saml/response";
import { serialize } from "../../shared/xml/tree";
import type { AuthorizeRequest, SamlTransaction } from "../../shared/types";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { UserRecord } from "../../shared/schemas/users";
import type { AppContext } from "../context";
import { pageSecurityHeaders } from "../login/cookies";
import { samlSigner } from "./keys";

/** @default the reference platform's authnContextClassRef */
const UNSPECIFIED_CONTEXT = "urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified";

/** The application's SAML settings (the addon is present: the SSO route refuses clients without it). */
export const samlpSettingsOf = (client: ClientRecord): SamlpSettings | undefined =>
  (client.extra.addons as { samlp?: SamlpSettings } | undefined)?.samlp;

/** The IdP entity id: the addon's `issuer`, else `urn:` and the tenant's host (the reference platform's form). */
export function entityIdOf(issuer: string, settings: SamlpSettings | undefined): string {
  return settings?.issuer ?? `urn:${new URL(issuer).host}`;
}

const ssoBase = (issuer: string) => (issuer.endsWith("/") ? issuer : `${issuer}/`);
export const ssoUrlOf = (issuer: string, clientId: string) => `${ssoBase(issuer)}samlp/${encodeURIComponent(clientId)}`;

/**
 * The auto-submitting form. Its CSP lets only its own nonce-tagged script run and the form go only to the
 * ACS origin; nothing frames it, nothing caches it.
 */
export function postForm(c: AppContext, acsUrl: string, fields: Record<string, string | undefined>): Response | Promise<Response> {
  pageSecurityHeaders(c);
  const nonce = randomToken(16);
  c.header(
    "Content-Security-Policy",
    `default-src 'none'; script-src 'nonce-${nonce}'; form-action ${new URL(acsUrl).origin}; frame-ancestors 'none'; base-uri 'none'`,
  );
  const entries = Object.entries(fields).filter((e): e is [string, string] => e[1] !== undefined);
  return c.html(
    html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Continue to the application</title></head>
<body><form method="post" action="${acsUrl}">${entries.map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}<noscript><button type="submit">Continue</button></noscript></form>
<script nonce="${nonce}">document.forms[0].submit();</script></body></html>`,
  );
}

/** A signed status-only Response (saml-core-2.0-os §3.2.2.2) posted to the ACS with the RelayState. */
async function samlStatusResponse(
  c: AppContext,
  saml: SamlTransaction,
  client: ClientRecord,
  status: { code: string; subcode: string; message: string },
): Promise<Response> {
  const settings = samlpSettingsOf(client) ?? {};
  const signatureAlgorithm = settings.signatureAlgorithm ?? "rsa-sha256";
  const key = await samlSigner(c.env, c.var.settings, c.var.tenant.id, signatureAlgorithm);
  if (!key) throw new OAuthError("server_error", "The tenant has no RSA key to sign SAML responses", 500);
  const document = await buildStatusResponse(
    {
      issuer: entityIdOf(c.var.tenant.issuer, settings),
      destination: settings.destination ?? saml.acs_url,
      ...(saml.request_id ? { inResponseTo: saml.request_id } : {}),
      now: now(),
    },
    status,
    { ...key, signatureAlgorithm, digestAlgorithm: settings.digestAlgorithm ?? "sha256" },
  );
  return postForm(c, saml.acs_url, { SAMLResponse: toBase64(utf8(serialize(document))), RelayState: saml.relay_state });
}

/**
 * Answers a passive request (`IsPassive`) that needs a login with a signed Responder/NoPassive status,
 * posted to the ACS like any response, so the SP learns the user is not logged in without any page.
 */
export const samlNoPassiveResponse = (c: AppContext, saml: SamlTransaction, client: ClientRecord): Promise<Response> =>
  samlStatusResponse(c, saml, client, { code: SAML.responder, subcode: SAML.noPassive, message: "The user is not logged in" });

/**
 * A login refused after authentication (a post-login action's deny, the organization rule): the SP hears a
 * signed Responder/RequestDenied status with the reason (saml-profiles-2.0-os §4.1.4.2), never an OAuth
 * error and never an assertion.
 */
export const samlDeniedResponse = (c: AppContext, saml: SamlTransaction, client: ClientRecord, message: string): Promise<Response> =>
  samlStatusResponse(c, saml, client, { code: SAML.responder, subcode: SAML.requestDenied, message });

/** Issues the signed SAML response for a user who just authenticated (or has a live session). */
export async function samlLoginResponse(
  c: AppContext,
  request: AuthorizeRequest & { samlp: SamlTransaction },
  client: ClientRecord,
  user: UserRecord,
  sessionId: string | null,
  authTimeS: number,
): Promise<Response> {
  const settings = samlpSettingsOf(client) ?? {};
  const tenant = c.var.tenant;
  const saml = request.samlp;
  const signatureAlgorithm = settings.signatureAlgorithm ?? "rsa-sha256";
  const key = await samlSigner(c.env, c.var.settings, tenant.id, signatureAlgorithm);
  if (!key) throw new OAuthError("server_error", "The tenant has no RSA key to sign SAML responses", 500);
  const attributes = samlAttributes(user, settings);
  const document = await buildSignedResponse(
    {
      issuer: entityIdOf(tenant.issuer, settings),
      destination: settings.destination ?? saml.acs_url,
      recipient: settings.recipient ?? saml.acs_url,
      audience: settings.audience ?? saml.sp_entity_id ?? saml.acs_url,
      ...(saml.request_id ? { inResponseTo: saml.request_id } : {}),
      nameId: nameIdentifier(user, attributes, settings),
      sessionIndex: sessionId ?? `_${randomToken(16)}`,
      authnInstant: authTimeS * 1000,
      now: now(),
      lifetimeS: settings.lifetimeInSeconds ?? DEFAULT_SAML_LIFETIME_S,
      authnContextClassRef: settings.authnContextClassRef ?? UNSPECIFIED_CONTEXT,
      attributes,
      typedAttributes: settings.typedAttributes !== false,
      includeAttributeNameFormat: settings.includeAttributeNameFormat !== false,
      signResponse: settings.signResponse === true,
    },
    { ...key, signatureAlgorithm, digestAlgorithm: settings.digestAlgorithm ?? "sha256" },
  );
  const xml = serialize(document);
  const encoded = toBase64(utf8(xml));
  return postForm(c, saml.acs_url, { SAMLResponse: encoded, RelayState: saml.relay_state });
}
