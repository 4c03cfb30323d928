import { z } from "zod";
import { clientAddons } from "./samlp";
import type { Json } from "../types/json";
import type { Jwk } from "./signing-keys";

/**
 * The reference platform's session-termination initiators (`oidc_logout.backchannel_logout_initiators`).
 * Gatehouse raises `rp-logout` (the logout endpoints), `session-revoked` (DELETE /sessions/{id} and its
 * revoke alias), `account-deactivated` (blocking the user), `account-deleted` and `session-expired`
 * (cleanup of naturally expired sessions); the others are accepted for compatibility.
 */
export const LOGOUT_INITIATORS = [
  "rp-logout",
  "idp-logout",
  "password-changed",
  "session-expired",
  "session-revoked",
  "account-deleted",
  "email-identifier-changed",
  "mfa-phone-unenrolled",
  "account-deactivated",
] as const;
export type LogoutInitiator = (typeof LOGOUT_INITIATORS)[number];

/** Application types of the reference platform. */
export const APP_TYPES = ["native", "spa", "regular_web", "non_interactive"] as const;

/** Token endpoint authentication methods (RFC 7591 §2, OIDC Core §9). */
export const AUTH_METHODS = ["none", "client_secret_post", "client_secret_basic", "private_key_jwt", "client_secret_jwt"] as const;

/** Client settings kept in the `extra` JSON column and shown top-level. */
export const CLIENT_EXTRA_FIELDS = [
  "jwt_configuration",
  "refresh_token",
  "organization_usage",
  "organization_require_behavior",
  "user_linking_mode",
  "addons",
  "oidc_logout",
  "oidc_backchannel_logout",
  "initiate_login_uri",
  "allowed_origins",
  "require_pushed_authorization_requests",
  "signed_request_object",
] as const;

/** JWK members that carry private or symmetric key material (RFC 7518 §6.2.2, §6.3.2, §6.4.1). */
const PRIVATE_JWK_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/** Members each public key type needs (RFC 7518 §6.2.1, §6.3.1; RFC 8037 §2). */
const REQUIRED_JWK_MEMBERS: Record<string, string[]> = { RSA: ["n", "e"], EC: ["crv", "x", "y"], OKP: ["crv", "x"] };

const jwk = z
  .record(z.string(), z.union([z.string(), z.array(z.string())]))
  .refine((key) => PRIVATE_JWK_MEMBERS.every((member) => !(member in key)), {
    message: "jwks must hold public keys only (no d, p, q, dp, dq, qi, oth or k member)",
  })
  .refine((key) => typeof key.kty === "string" && key.kty in REQUIRED_JWK_MEMBERS, { message: "kty must be RSA, EC or OKP" })
  .refine((key) => (REQUIRED_JWK_MEMBERS[String(key.kty)] ?? []).every((member) => typeof key[member] === "string"), {
    message: "the key lacks a public member its kty requires",
  });

/** Public keys for `private_key_jwt` (a Gatehouse extension: the reference platform uses credentials). */
export const clientJwks = z.strictObject({ keys: z.array(jwk).min(1).max(10) });

const uriList = z.array(z.string().trim().min(1).max(2048)).max(100);

/** The origin (scheme, host, port) of an http(s) URL, or null (no wildcard: `*` hosts are not matched). */
export function originOf(value: string): string | null {
  if (!URL.canParse(value)) return null;
  const url = new URL(value);
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.hostname.includes("*")) return null;
  return url.origin;
}

/** `allowed_origins`: http(s) URLs, compared by their origin (path, query and fragment are ignored). */
const allowedOrigins = z
  .array(z.string().trim().min(1).max(2048).refine((value) => originOf(value) !== null, "allowed_origins entries must be http(s) URLs without wildcards"))
  .max(100);

const metadataKey = z.string().min(1).max(255);
/** The reference platform allows at most 10 client_metadata properties of up to 255 characters. */
export const MAX_CLIENT_METADATA_KEYS = 10;

const jwtConfiguration = z
  .strictObject({
    lifetime_in_seconds: z.int().min(1).max(2_592_000),
    secret_encoded: z.boolean(),
    scopes: z.record(z.string(), z.json()),
    // ID-token algorithm: the ones this server issues (HS256 with the client's own secret; see docs/tokens-and-keys.md).
    alg: z.enum(["HS256", "RS256", "PS256"]),
  })
  .partial();

const refreshToken = z
  .strictObject({
    rotation_type: z.enum(["rotating", "non-rotating"]),
    expiration_type: z.enum(["expiring", "non-expiring"]),
    leeway: z.int().min(0).max(3600),
    token_lifetime: z.int().min(1).max(157_680_000),
    infinite_token_lifetime: z.boolean(),
    idle_token_lifetime: z.int().min(1).max(157_680_000),
    infinite_idle_token_lifetime: z.boolean(),
  })
  .partial();

/**
 * A back-channel logout URI (OIDC Back-Channel Logout 1.0 §2.2): absolute, no fragment, no credentials;
 * https, or http on a loopback host for local development.
 */
const backchannelLogoutUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const u = new URL(value);
      const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(u.hostname) || u.hostname.endsWith(".localhost");
      return (u.protocol === "https:" || (u.protocol === "http:" && loopback)) && !u.hash && !value.includes("#") && !u.username && !u.password;
    } catch {
      return false;
    }
  }, "backchannel_logout_urls must be absolute https URLs (http only on a loopback host) without a fragment or credentials");

/** The reference platform allows one URL ("currently only one URL is allowed"). */
const backchannelLogoutUrls = z.array(backchannelLogoutUrl).max(1);

const backchannelLogoutInitiators = z
  .strictObject({
    mode: z.enum(["custom", "all"]),
    selected_initiators: z.array(z.enum(LOGOUT_INITIATORS)).max(LOGOUT_INITIATORS.length),
  })
  .partial()
  .refine((v) => v.mode !== "custom" || v.selected_initiators !== undefined, {
    message: "selected_initiators is required when mode is custom",
  });

/** `oidc_logout` (the reference platform's current shape). */
const oidcLogout = z.strictObject({
  backchannel_logout_urls: backchannelLogoutUrls,
  backchannel_logout_initiators: backchannelLogoutInitiators.optional(),
});

/** `oidc_backchannel_logout`: the reference platform's older, deprecated spelling (URLs only). */
const oidcBackchannelLogout = z.strictObject({ backchannel_logout_urls: backchannelLogoutUrls });

const organizationUsage = z.enum(["deny", "allow", "require"]);
const organizationRequireBehavior = z.enum(["no_prompt", "pre_login_prompt", "post_login_prompt"]);
const userLinkingMode = z.enum(["builtin", "template", "off"]);

/**
 * The application's login route (the reference platform's `initiate_login_uri`): organization invitation
 * links point at it. https, or http on a loopback host for local development (RFC 8252 §7.3's rule).
 */
const initiateLoginUri = z
  .url({ message: "initiate_login_uri must be an absolute URL" })
  .max(2048)
  .refine((value) => {
    // Refinements run even when the URL check failed: parse defensively (a throw here would be a 500).
    if (!URL.canParse(value)) return false;
    const url = new URL(value);
    const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname) || url.hostname.endsWith(".localhost");
    return !url.hash && (url.protocol === "https:" || (url.protocol === "http:" && loopback));
  }, "initiate_login_uri must be an https URL without a fragment (http only on localhost)");

/**
 * The reference platform's JAR settings (RFC 9101): `required` makes /authorize and /oauth/par accept the
 * client's requests only as signed request objects. Request objects are verified with the client's `jwks`
 * (or its secret for HS*); the reference's `credentials` list (keys registered under
 * /clients/{id}/credentials) is not offered yet.
 */
const signedRequestObject = z.strictObject({ required: z.boolean().optional() });

const name = z.string().trim().min(1).max(255);
const description = z.string().max(140);

/** Settings that create and update share, each replaced as a whole. */
const settings = {
  app_type: z.enum(APP_TYPES),
  token_endpoint_auth_method: z.enum(AUTH_METHODS),
  grant_types: z.array(z.string().trim().min(1).max(256)).max(20),
  callbacks: uriList,
  allowed_logout_urls: uriList,
  web_origins: uriList,
  is_first_party: z.boolean(),
  oidc_conformant: z.boolean(),
};

/**
 * Fields a client read shows that no write sets (issue 28 point 6): accepted and ignored, as the reference
 * platform does, so what auth0-deploy-cli exported can be sent back unchanged. `client_id` is not among
 * them: a body naming one is refused (the CLI drops it; a caller sending another id has made a mistake).
 */
export const CLIENT_READ_ONLY_FIELDS = ["tenant", "global", "created_at", "updated_at", "signing_keys", "callback_url_template"] as const;

const readOnly = {
  tenant: z.string().max(256).optional(),
  global: z.boolean().optional(),
  created_at: z.string().max(64).optional(),
  updated_at: z.string().max(64).optional(),
  signing_keys: z.array(z.json()).max(10).optional(),
  callback_url_template: z.boolean().optional(),
};

/** Signing algorithms the reference platform allows for a public-key credential. @default RS256 */
export const CREDENTIAL_ALGS = ["RS256", "RS384", "PS256"] as const;

/**
 * POST /api/v2/clients/{id}/credentials. Gatehouse keeps public keys for private_key_jwt; the certificate
 * kinds (`x509_cert`, `cert_subject_dn`: mutual-TLS client authentication) are refused with a clear 400.
 */
export const createClientCredentialBody = z.strictObject({
  credential_type: z.enum(["public_key", "x509_cert", "cert_subject_dn"]),
  name: z.string().trim().min(1).max(128).optional(),
  pem: z.string().min(1).max(20_000).optional(),
  subject_dn: z.string().max(256).optional(),
  alg: z.enum(CREDENTIAL_ALGS).optional(),
  parse_expiry_from_cert: z.boolean().optional(),
  expires_at: z.iso.datetime({ offset: true }).optional(),
});

/** PATCH /api/v2/clients/{id}/credentials/{credential_id}: only the expiry changes (null: never expires). */
export const updateClientCredentialBody = z.strictObject({ expires_at: z.iso.datetime({ offset: true }).nullable() });

/**
 * `client_authentication_methods` (the reference's way to turn on private_key_jwt): on create, the credentials
 * themselves; on update, ids of the client's existing credentials (/clients/{id}/credentials); null clears it.
 * The mutual-TLS methods are parsed so that they are refused with a clear 400 (Gatehouse has no mTLS).
 */
const mtlsMethod = z.strictObject({ credentials: z.array(z.json()).max(2) });
export const createAuthMethodsBody = z.strictObject({
  private_key_jwt: z.strictObject({ credentials: z.array(createClientCredentialBody).min(1).max(2) }).optional(),
  tls_client_auth: mtlsMethod.optional(),
  self_signed_tls_client_auth: mtlsMethod.optional(),
});
export const updateAuthMethodsBody = z.strictObject({
  private_key_jwt: z.strictObject({ credentials: z.array(z.strictObject({ id: z.string().min(1).max(64) })).min(1).max(2) }).optional(),
  tls_client_auth: mtlsMethod.optional(),
  self_signed_tls_client_auth: mtlsMethod.optional(),
});

/** The credential ids a client's `client_authentication_methods` enables for private_key_jwt (none: not set). */
export function privateKeyJwtCredentialIds(client: Pick<ClientRecord, "extra">): string[] {
  const methods = client.extra.client_authentication_methods as { private_key_jwt?: { credentials?: { id?: unknown }[] } } | undefined;
  return (methods?.private_key_jwt?.credentials ?? []).map((c) => c.id).filter((id): id is string => typeof id === "string");
}

/** POST /api/v2/clients. Unknown properties are refused. */
export const createClientBody = z.strictObject({
  name,
  description: description.optional(),
  ...z.object(settings).partial().shape,
  client_metadata: z
    .record(metadataKey, z.string().max(255))
    .refine((m) => Object.keys(m).length <= MAX_CLIENT_METADATA_KEYS, `client_metadata allows at most ${MAX_CLIENT_METADATA_KEYS} properties`)
    .optional(),
  jwks: clientJwks.optional(),
  jwt_configuration: jwtConfiguration.optional(),
  refresh_token: refreshToken.optional(),
  organization_usage: organizationUsage.optional(),
  organization_require_behavior: organizationRequireBehavior.optional(),
  user_linking_mode: userLinkingMode.optional(),
  addons: clientAddons.optional(),
  oidc_logout: oidcLogout.optional(),
  oidc_backchannel_logout: oidcBackchannelLogout.optional(),
  initiate_login_uri: initiateLoginUri.optional(),
  /** The reference platform's "Allowed Origins (CORS)": origins that may call the cross-origin login endpoints. */
  allowed_origins: allowedOrigins.optional(),
  /** RFC 9126 §6: /authorize accepts this client's requests only through POST /oauth/par. */
  require_pushed_authorization_requests: z.boolean().optional(),
  signed_request_object: signedRequestObject.optional(),
  client_authentication_methods: createAuthMethodsBody.optional(),
  ...readOnly,
});

/**
 * PATCH /api/v2/clients/{id}: every field optional; null clears description, jwks and the extra settings;
 * client_metadata is merged key by key (a null value removes the key).
 */
export const updateClientBody = z.strictObject({
  name: name.optional(),
  description: description.nullable().optional(),
  ...z.object(settings).partial().shape,
  client_metadata: z.record(metadataKey, z.string().max(255).nullable()).optional(),
  jwks: clientJwks.nullable().optional(),
  jwt_configuration: jwtConfiguration.nullable().optional(),
  refresh_token: refreshToken.nullable().optional(),
  organization_usage: organizationUsage.nullable().optional(),
  organization_require_behavior: organizationRequireBehavior.nullable().optional(),
  user_linking_mode: userLinkingMode.nullable().optional(),
  addons: clientAddons.nullable().optional(),
  oidc_logout: oidcLogout.nullable().optional(),
  oidc_backchannel_logout: oidcBackchannelLogout.nullable().optional(),
  initiate_login_uri: initiateLoginUri.nullable().optional(),
  allowed_origins: allowedOrigins.nullable().optional(),
  require_pushed_authorization_requests: z.boolean().nullable().optional(),
  signed_request_object: signedRequestObject.nullable().optional(),
  client_authentication_methods: updateAuthMethodsBody.nullable().optional(),
  // null only beside client_authentication_methods (the reference's way to leave the secret methods).
  token_endpoint_auth_method: z.enum(AUTH_METHODS).nullable().optional(),
  ...readOnly,
});

export type CreateClientBody = z.infer<typeof createClientBody>;
export type UpdateClientBody = z.infer<typeof updateClientBody>;

/** PATCH /api/v2/clients/{id}/connections: the ordered connection ids shown on the login screen. */
export const clientConnectionsBody = z.array(z.string().min(1).max(64)).max(100);

export interface ClientRecord {
  client_id: string;
  name: string;
  description: string | null;
  app_type: string;
  client_secret_enc: string | null;
  token_endpoint_auth_method: string;
  grant_types: string[];
  callbacks: string[];
  allowed_logout_urls: string[];
  web_origins: string[];
  jwks: { keys: Jwk[] } | null;
  is_first_party: boolean;
  oidc_conformant: boolean;
  client_metadata: Record<string, string>;
  /** Less common settings kept as one JSON object (jwt_configuration, refresh_token, organization_usage ...). */
  extra: Record<string, Json>;
  is_system: boolean;
  created_at: string;
  updated_at: string;
}

/**
 * The origins a browser may call the application's cross-origin endpoints from (/co/authenticate,
 * /dbconnections/signup, /passwordless/start): its `web_origins` and its `allowed_origins` (the reference
 * platform's "Allowed Origins (CORS)"), without trailing slashes.
 */
export function browserOrigins(client: Pick<ClientRecord, "web_origins" | "extra">): string[] {
  const allowed = Array.isArray(client.extra.allowed_origins) ? client.extra.allowed_origins.filter((o): o is string => typeof o === "string") : [];
  return [...client.web_origins.map((origin) => origin.replace(/\/$/, "")), ...allowed.map(originOf).filter((o): o is string => o !== null)];
}

/**
 * When every refresh token of the client was revoked (POST /api/v2/refresh-tokens/revoke with `client_id`
 * alone), kept in `extra` and never shown: families started before it are revoked at their next use, and
 * listed as revoked at that time.
 */
export const CLIENT_TOKENS_REVOKED_BEFORE = "refresh_tokens_revoked_before";

export function clientTokensRevokedBefore(client: Pick<ClientRecord, "extra">): number | null {
  const at = client.extra[CLIENT_TOKENS_REVOKED_BEFORE];
  return typeof at === "number" ? at : null;
}

/** A client as the worker prepared it: id generated, secret already encrypted (or none for public clients). */
export type NewClient = Omit<ClientRecord, "is_system" | "created_at" | "updated_at">;

/** PATCH /clients/{id}: fields replaced; client_metadata and extra merged key by key (null removes a key). */
export interface ClientPatch {
  name?: string;
  description?: string | null;
  app_type?: string;
  token_endpoint_auth_method?: string;
  grant_types?: string[];
  callbacks?: string[];
  allowed_logout_urls?: string[];
  web_origins?: string[];
  jwks?: { keys: Jwk[] } | null;
  is_first_party?: boolean;
  oidc_conformant?: boolean;
  client_metadata?: Record<string, string | null>;
  extra?: Record<string, Json | null>;
  /** A fresh encrypted secret, used only when the patched client needs one and has none. */
  client_secret_enc_if_missing?: string;
}

// Client credentials (issue 28 point 2: /clients/{id}/credentials).

export interface ClientCredentialRecord {
  id: string;
  client_id: string;
  name: string | null;
  credential_type: "public_key";
  /** RFC 7638 thumbprint of the key: the `kid` an assertion names. */
  kid: string;
  alg: (typeof CREDENTIAL_ALGS)[number];
  /** The public key as a JWK (with kid and alg). */
  public_jwk: Record<string, string>;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
}

export type NewClientCredential = Omit<ClientCredentialRecord, "created_at" | "updated_at" | "expires_at"> & { expires_at: number | null };
