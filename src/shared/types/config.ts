import type { AttackProtection } from "../schemas/attack-protection";
import type { BoundAction } from "./actions";
/** Tenant configuration records: the snapshot every token request reads. */
import type { Json } from "./json";

/** A JSON Web Key as stored (public members only unless encrypted). */
export type Jwk = Record<string, string | string[] | undefined>;

/** A signing key row as the worker needs it; the private half stays encrypted until the worker opens it. */
export interface SigningKeyRecord {
  kid: string;
  type: "jwt_signing" | "saml_encryption";
  alg: string;
  public_jwk: Jwk;
  private_jwk_enc: string;
  /** PEM X.509 certificate over the public key (null only for keys created before certificates). */
  cert: string | null;
  /** From then on the key may sign (published in the JWKS from creation). */
  activates_at: string;
  /** End of the grace period after a successor activated: unpublished from then on. */
  retire_at: string | null;
  revoked_at: string | null;
  /** Certificate notAfter: the key neither signs nor is published from then on. */
  expires_at: string | null;
  /** Provided by a parent tenant: read-only here (SPEC §4.2 "Signing keys"). */
  inherited: boolean;
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
  /** RBAC: user tokens carry only the user's permissions for this API (the reference platform's switch). */
  enforce_policies: boolean;
  /** `access_token_authz`: user tokens also carry a `permissions` claim when RBAC is on. */
  token_dialect: "access_token" | "access_token_authz";
  /** The HS256 signing secret, encrypted (never shown; the worker opens it); null when the API has none. */
  signing_secret_enc: string | null;
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
  /** Triggers with at least one enabled webhook, so hot paths only record hook events someone receives. */
  hookTriggers: string[];
  /** Lockout and suspicious-IP throttling settings (GET/PATCH /api/v2/attack-protection/*). */
  attackProtection: AttackProtection;
  /** Triggers with an enabled `account-linking` template hook (SPEC §6.2). */
  linkingTriggers: string[];
  /** Each trigger's bound actions in execution order (their deployed versions; no code). */
  actions: Record<string, BoundAction[]>;
}

/** A key pair the worker generated (private half encrypted, certificate issued) for the object to store. */
export interface NewSigningKey {
  kid: string;
  type: "jwt_signing" | "saml_encryption";
  alg: string;
  public_jwk: Jwk;
  private_jwk_enc: string;
  cert: string;
  /** Epoch ms. */
  expires_at: number;
}

/** What the worker prepared (keys generated, secrets encrypted, passwords hashed) for an idempotent seed. */
export interface TenantSeed {
  tenantId: string;
  /** Null when the tenant already has a key that signs. */
  signingKey: NewSigningKey | null;
  managementAudience: string;
  managementScopes: string[];
  /** The control plane's M2M client; absent for child tenants. */
  controlPlaneClient?: { client_id: string; name: string; client_secret_enc: string };
  admin?: { email: string; password_hash: string };
}
