import { z } from "zod";
import { deviceAuthorizationSchema } from "../../shared/schemas/oauth";
import { passwordlessStartBody } from "../../shared/schemas/passwordless";
import { GRANTS } from "./grants";

let document: string | undefined;

const json = (description: string) => ({ description, content: { "application/json": {} } });
const query = (names: string[], required: string[] = []) =>
  names.map((name) => ({ name, in: "query", required: required.includes(name), schema: { type: "string" } }));
const formOrJson = (schema: unknown) => ({
  content: { "application/x-www-form-urlencoded": { schema }, "application/json": { schema } },
});

/**
 * GET /.well-known/openapi.json: the Auth API, built once per isolate. The token endpoint's body schemas are
 * the very zod schemas that validate /oauth/token.
 */
export function authApiSpec(): string {
  document ??= JSON.stringify({
    openapi: "3.1.0",
    info: { title: "Gatehouse Auth API", version: "1" },
    paths: {
      "/authorize": {
        get: {
          summary: "Authorization request (RFC 6749 §4.1.1, OIDC Core §3)",
          parameters: query(
            ["client_id", "redirect_uri", "response_type", "response_mode", "scope", "state", "nonce", "audience", "prompt", "max_age", "code_challenge", "code_challenge_method", "login_ticket", "screen_hint", "login_hint", "organization", "invitation", "request_uri"],
            ["client_id", "redirect_uri", "response_type"],
          ),
          responses: { "302": { description: "Redirect to the login page or to the client" }, "400": json("Invalid client or redirect URI") },
        },
      },
      "/oauth/token": {
        post: {
          summary: "Token endpoint (RFC 6749 §3.2)",
          requestBody: formOrJson({ oneOf: [...GRANTS.values()].map((g) => z.toJSONSchema(g.parameters, { io: "input" })) }),
          responses: { "200": json("Tokens"), "400": json("OAuth error"), "401": json("invalid_client"), "403": json("access_denied / invalid_grant") },
        },
      },
      "/oauth/device/code": {
        post: {
          summary: "Device authorization request (RFC 8628 §3.1); the user approves at /activate",
          requestBody: formOrJson(z.toJSONSchema(deviceAuthorizationSchema, { io: "input" })),
          responses: { "200": json("device_code, user_code, verification_uri(_complete), expires_in, interval"), "400": json("OAuth error"), "401": json("invalid_client") },
        },
      },
      "/oauth/par": {
        post: {
          summary: "Pushed authorization request (RFC 9126): /authorize's parameters, client authenticated",
          requestBody: formOrJson({ type: "object", required: ["client_id", "response_type", "redirect_uri"], additionalProperties: { type: "string" } }),
          responses: { "201": json("request_uri (urn:ietf:params:oauth:request_uri:...), expires_in 60"), "400": json("OAuth error"), "401": json("invalid_client") },
        },
      },
      "/oauth/revoke": {
        post: {
          summary: "Token revocation (RFC 7009)",
          requestBody: formOrJson({ type: "object", required: ["token"], properties: { token: { type: "string" }, token_type_hint: { type: "string" } } }),
          responses: { "200": { description: "Revoked (or nothing to revoke)" }, "401": json("invalid_client") },
        },
      },
      "/userinfo": { get: { summary: "Claims of the access token's user (OIDC Core §5.3)", security: [{ bearer: [] }], responses: { "200": json("Claims"), "401": json("invalid_token") } } },
      "/.well-known/jwks.json": { get: { summary: "The tenant's public signing keys", responses: { "200": json("JWK set") } } },
      "/.well-known/openid-configuration": { get: { summary: "OpenID Provider metadata", responses: { "200": json("Discovery document") } } },
      "/v2/logout": { get: { summary: "End the browser session", parameters: query(["client_id", "returnTo"]), responses: { "302": { description: "To returnTo or the logged-out page" } } } },
      "/oidc/logout": {
        get: {
          summary: "RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0)",
          parameters: query(["id_token_hint", "post_logout_redirect_uri", "state", "client_id"]),
          responses: { "302": { description: "To post_logout_redirect_uri or the logged-out page" } },
        },
      },
      "/dbconnections/signup": {
        post: {
          summary: "Sign up a database-connection user",
          requestBody: { content: { "application/json": { schema: { type: "object", required: ["client_id", "email", "password", "connection"], properties: { client_id: { type: "string" }, email: { type: "string" }, password: { type: "string" }, connection: { type: "string" }, user_metadata: { type: "object" } } } } } },
          responses: { "200": json("{id, email, email_verified, created_at, updated_at}"), "400": json("{name, code, description, statusCode}") },
        },
      },
      "/dbconnections/change_password": {
        post: {
          summary: "Send a database-connection user the email with a single-use link to choose a new password (same answer whether or not the account exists)",
          requestBody: { content: { "application/json": { schema: { type: "object", required: ["client_id", "email", "connection"], properties: { client_id: { type: "string" }, email: { type: "string" }, connection: { type: "string" }, organization: { type: "string" } } } } } },
          responses: { "200": { description: "We've just sent you an email to reset your password.", content: { "text/plain": { schema: { type: "string" } } } }, "400": json("invalid_request") },
        },
      },
      "/passwordless/start": {
        post: {
          summary: "Send a 6-digit passwordless code by email or SMS (redeemed with the passwordless/otp grant)",
          requestBody: formOrJson(z.toJSONSchema(passwordlessStartBody, { io: "input" })),
          responses: { "200": json("{_id, email, email_verified} or {_id, phone_number, phone_verified}"), "400": json("invalid_request"), "401": json("invalid_client"), "429": json("too_many_requests") },
        },
      },
      "/u2/guardian/enroll": {
        get: {
          summary: "Redeem an MFA enrollment ticket (single use, 5 days) and continue to the enrollment screens",
          parameters: query(["ticket", "tenant_id"], ["ticket"]),
          responses: { "302": { description: "To the enrollment screen" }, "403": { description: "Expired or already used ticket" } },
        },
      },
      "/co/authenticate": {
        post: {
          summary: "Cross-origin authentication: credentials for a login_ticket",
          requestBody: { content: { "application/json": { schema: { type: "object", required: ["client_id", "username", "password"], properties: { client_id: { type: "string" }, username: { type: "string" }, password: { type: "string" }, realm: { type: "string" }, credential_type: { type: "string" } } } } } },
          responses: { "200": json("{login_ticket, co_verifier, co_id}"), "403": json("access_denied") },
        },
      },
      "/samlp/metadata/{client_id}": {
        get: {
          summary: "SAML 2.0 IdP metadata of an application (public): entity id, SSO bindings, signing certificates",
          parameters: [{ name: "client_id", in: "path", required: true, schema: { type: "string" } }],
          responses: { "200": { description: "EntityDescriptor", content: { "application/xml": {} } }, "404": json("Unknown client") },
        },
      },
      "/samlp/{client_id}": {
        get: {
          summary: "SAML 2.0 SSO, HTTP-Redirect binding (deflated SAMLRequest; none: IdP-initiated, when enabled)",
          parameters: [{ name: "client_id", in: "path", required: true, schema: { type: "string" } }, ...query(["SAMLRequest", "RelayState"])],
          responses: { "200": { description: "Form posting a signed SAMLResponse to the ACS (live session)" }, "302": { description: "To the login page" }, "400": { description: "Refused request (HTML)" }, "403": { description: "SAML not enabled for the application" }, "404": json("Unknown client") },
        },
        post: {
          summary: "SAML 2.0 SSO, HTTP-POST binding",
          parameters: [{ name: "client_id", in: "path", required: true, schema: { type: "string" } }],
          requestBody: { content: { "application/x-www-form-urlencoded": { schema: { type: "object", properties: { SAMLRequest: { type: "string" }, RelayState: { type: "string" } } } } } },
          responses: { "200": { description: "Form posting a signed SAMLResponse to the ACS" }, "302": { description: "To the login page" }, "400": { description: "Refused request (HTML)" } },
        },
      },
    },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
  });
  return document;
}
