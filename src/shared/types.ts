/**
 * Plain data that crosses Durable Object RPC (never class instances). Times are ISO 8601 strings on the
 * wire and in these records; the objects store epoch milliseconds.
 */

/** Any JSON value (RPC-serializable, unlike `unknown`). */
export type Json = string | number | boolean | null | object;

/** A tenant as the management API shows it (SPEC §2.1). */
export interface Tenant {
  id: string;
  name: string;
  friendly_name: string | null;
  audience: string | null;
  sender_name: string | null;
  sender_email: string | null;
  deployment_type: "shared" | "wfp";
  provisioning_state: "pending" | "ready" | "failed";
  provisioning_error: string | null;
  provisioning_state_changed_at: string;
  bundle_configuration: string;
  worker_version: string;
  worker_script_name: string;
  storage_kind: "own_d1" | "existing_d1" | "shared_planetscale";
  d1_database_id: string | null;
  created_at: string;
  updated_at: string;
}

/** Fields a caller may set on create (id optional: generated when absent). */
export interface TenantInput {
  id: string;
  name: string;
  friendly_name?: string | null;
  audience?: string | null;
  sender_name?: string | null;
  sender_email?: string | null;
  deployment_type?: "shared" | "wfp";
  storage_kind?: Tenant["storage_kind"];
  bundle_configuration?: string;
  worker_version?: string;
}

export type TenantPatch = Partial<Omit<TenantInput, "id" | "deployment_type">>;

/** How a host resolved (PlatformObject.resolveHost). */
export interface HostResolution {
  tenantId: string;
  /** The custom domain that matched, when resolution was by custom domain. */
  customDomain: string | null;
}

/** A JSON Web Key as stored (public members only unless encrypted). */
export type Jwk = Record<string, string | string[] | undefined>;

/** A signing key row as the worker needs it; the private half stays encrypted until the worker opens it. */
export interface SigningKeyRecord {
  kid: string;
  type: "jwt_signing" | "saml_encryption";
  alg: string;
  public_jwk: Jwk;
  private_jwk_enc: string;
  is_current: boolean;
  revoked_at: string | null;
  expires_at: string | null;
  created_at: string;
}

export interface ResourceServerRecord {
  id: string;
  identifier: string;
  name: string;
  scopes: { value: string; description?: string }[];
  signing_alg: string;
  token_lifetime: number;
  allow_offline_access: boolean;
  is_system: boolean;
  created_at: string;
  updated_at: string;
}

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

export interface ClientGrantRecord {
  id: string;
  client_id: string;
  audience: string;
  scope: string[];
  created_at: string;
  updated_at: string;
}

export interface ConnectionRecord {
  id: string;
  name: string;
  strategy: string;
  /** Public options, plus the top-level fields kept here (display_name, enabled_clients, metadata ...). */
  options: Record<string, Json>;
  /** Credential options (client_secret ...) as one encrypted JSON object; the worker opens it. */
  secrets_enc: string | null;
  created_at: string;
  updated_at: string;
}

/** Universal-login branding (GET/PATCH /api/v2/branding), read by the login pages from the snapshot. */
export interface Branding {
  logo_url?: string;
  favicon_url?: string;
  colors?: { primary?: string; page_background?: string };
  font?: { url?: string };
}

/**
 * Everything a token request needs, read in one RPC and cached per isolate (ARCHITECTURE.md §4), stamped
 * with the tenant object's configuration version.
 */
export interface TenantConfig {
  version: number;
  tenantId: string;
  settings: Record<string, unknown>;
  signingKeys: SigningKeyRecord[];
  resourceServers: ResourceServerRecord[];
  clients: ClientRecord[];
  clientGrants: ClientGrantRecord[];
  connections: ConnectionRecord[];
  branding: Branding;
}

/** What the worker prepared (keys generated, secrets encrypted, passwords hashed) for an idempotent seed. */
export interface TenantSeed {
  tenantId: string;
  signingKey: { kid: string; alg: string; public_jwk: Jwk; private_jwk_enc: string };
  managementAudience: string;
  managementScopes: string[];
  /** The control plane's M2M client; absent for child tenants. */
  controlPlaneClient?: { client_id: string; name: string; client_secret_enc: string };
  admin?: { email: string; password_hash: string };
}

/** A user as the API shows it (never the password hash). */
export interface UserRecord {
  user_id: string;
  connection: string;
  email: string | null;
  email_verified: boolean;
  name: string | null;
  nickname: string | null;
  picture: string | null;
  blocked: boolean;
  app_metadata: Record<string, Json>;
  user_metadata: Record<string, Json>;
  last_login: string | null;
  logins_count: number;
  created_at: string;
  updated_at: string;
}

/** A user with the bcrypt hash, for the worker's password check only. */
export interface UserWithSecret extends UserRecord {
  password_hash: string | null;
}

export interface NewUser {
  user_id: string;
  connection: string;
  email: string;
  email_verified: boolean;
  password_hash: string | null;
  name?: string | null;
  nickname?: string | null;
  user_metadata?: Record<string, Json>;
}

/** A validated /authorize request, as kept in its login session. */
export interface AuthorizeRequest {
  client_id: string;
  redirect_uri: string;
  response_type: string;
  response_mode: "query" | "fragment" | "form_post";
  scope: string;
  state?: string;
  nonce?: string;
  audience?: string;
  organization?: string;
  prompt?: string;
  max_age?: number;
  code_challenge?: string;
  code_challenge_method?: "S256" | "plain";
  ui_locales?: string;
  screen_hint?: string;
  login_hint?: string;
}

export interface LoginSession {
  id: string;
  client_id: string;
  request: AuthorizeRequest;
  csrf_token: string;
  state: "pending" | "awaiting_mfa" | "completed";
  user_id: string | null;
  created_at: string;
  expires_at: string;
}

export interface SessionRecord {
  id: string;
  secret_hash: string;
  user_id: string;
  client_ids: string[];
  authenticated_at: string;
  last_interaction_at: string;
  expires_at: string;
  created_at: string;
  updated_at: string;
}

/** What an authorization code grants, fixed when it is issued. */
export interface CodeGrant {
  scope: string;
  audience?: string;
  nonce?: string;
  /** Seconds since the epoch. */
  auth_time: number;
  organization?: string;
}

export interface NewAuthorizationCode {
  code_hash: string;
  client_id: string;
  user_id: string;
  session_id: string | null;
  redirect_uri: string;
  grant: CodeGrant;
  code_challenge: string | null;
  code_challenge_method: "S256" | "plain" | null;
  expires_at: number;
}

export interface RedeemedCode {
  client_id: string;
  user_id: string;
  session_id: string | null;
  redirect_uri: string;
  grant: CodeGrant;
}

/** The conditions a code must meet to be consumed; any mismatch leaves it unconsumed. */
export interface CodeRedemption {
  code_hash: string;
  client_id: string;
  redirect_uri: string | null;
  /** S256(code_verifier) and the verifier itself, computed in the worker. */
  verifier_s256: string | null;
  verifier_plain: string | null;
}

// Management writes of configuration (clients, resource servers, client grants, connections, branding)

/**
 * A page request as it crosses RPC (SPEC §4.3): an offset window, or the keyset position after which a
 * checkpoint page starts (newest first: created_at, then id, descending).
 */
export type ListWindow =
  | { offset: number; limit: number }
  | { after: { createdAt: number; id: string } | null; limit: number };

/** One page of records; `total` only for offset windows. */
export interface ListPage<T> {
  items: T[];
  total: number | null;
}

/** A client as the worker prepared it: id generated, secret already encrypted (or none for public clients). */
export interface NewClient {
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
  extra: Record<string, Json>;
}

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

export interface NewResourceServer {
  id: string;
  identifier: string;
  name: string;
  scopes: { value: string; description?: string }[];
  signing_alg: string;
  token_lifetime: number;
  allow_offline_access: boolean;
}

export type ResourceServerPatch = Partial<Pick<NewResourceServer, "name" | "scopes" | "signing_alg" | "token_lifetime" | "allow_offline_access">>;

export interface NewClientGrant {
  id: string;
  client_id: string;
  audience: string;
  scope: string[];
}

/** A connection as the worker prepared it: credential options already split out and encrypted. */
export interface NewConnection {
  id: string;
  name: string;
  strategy: string;
  options: Record<string, Json>;
  secrets_enc: string | null;
}

/**
 * PATCH /connections/{id}: `options` (with `secrets_enc`) replaces the whole options object, as the reference
 * platform does; the top-level fields kept in options are replaced one by one (null removes).
 */
export interface ConnectionPatch {
  options?: Record<string, Json>;
  secrets_enc?: string | null;
  fields?: Record<string, Json | null>;
}

/** PATCH /branding: fields replaced, `colors` and `font` merged key by key; null removes. */
export interface BrandingPatch {
  logo_url?: string | null;
  favicon_url?: string | null;
  colors?: { primary?: string | null; page_background?: string | null } | null;
  font?: { url?: string | null } | null;
}
