/** Row -> record mappers shared by the tenant modules (JSON columns parsed, 1/0 to booleans, ms to ISO). */
import type { ClientGrantRecord } from "../../../shared/schemas/client-grants";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { ConnectionRecord } from "../../../shared/schemas/connections";
import type { ResourceServerRecord } from "../../../shared/schemas/resource-servers";
import type { SigningKeyRecord } from "../../../shared/schemas/signing-keys";
import { iso, json } from "../../sql";

type Row = Record<string, unknown>;
const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
const time = (v: unknown) => iso(v as number | null) as string;

export function toClient(r: Row): ClientRecord {
  return {
    client_id: String(r.client_id),
    name: String(r.name),
    description: text(r.description),
    app_type: String(r.app_type),
    client_secret_enc: text(r.client_secret_enc),
    token_endpoint_auth_method: String(r.token_endpoint_auth_method),
    grant_types: json(text(r.grant_types), []),
    callbacks: json(text(r.callbacks), []),
    allowed_logout_urls: json(text(r.allowed_logout_urls), []),
    web_origins: json(text(r.web_origins), []),
    jwks: json(text(r.jwks), null),
    is_first_party: r.is_first_party === 1,
    oidc_conformant: r.oidc_conformant === 1,
    client_metadata: json(text(r.client_metadata), {}),
    extra: json(text(r.extra), {}),
    is_system: r.is_system === 1,
    created_at: time(r.created_at),
    updated_at: time(r.updated_at),
  };
}

export function toClientGrant(r: Row): ClientGrantRecord {
  return {
    id: String(r.id),
    client_id: String(r.client_id),
    audience: String(r.audience),
    scope: json(text(r.scope), []),
    organization_usage: r.organization_usage === "deny" || r.organization_usage === "allow" || r.organization_usage === "require" ? r.organization_usage : null,
    allow_any_organization: r.allow_any_organization === null || r.allow_any_organization === undefined ? null : r.allow_any_organization === 1,
    created_at: time(r.created_at),
    updated_at: time(r.updated_at),
  };
}

export function toResourceServer(r: Row): ResourceServerRecord {
  return {
    id: String(r.id),
    identifier: String(r.identifier),
    name: String(r.name),
    scopes: json(text(r.scopes), []),
    signing_alg: String(r.signing_alg),
    token_lifetime: Number(r.token_lifetime),
    allow_offline_access: r.allow_offline_access === 1,
    enforce_policies: r.enforce_policies === 1,
    token_dialect: r.token_dialect === "access_token_authz" ? "access_token_authz" : "access_token",
    signing_secret_enc: text(r.signing_secret_enc),
    proof_of_possession: json(text(r.proof_of_possession), null),
    is_system: r.is_system === 1,
    created_at: time(r.created_at),
    updated_at: time(r.updated_at),
  };
}

export function toConnection(r: Row): ConnectionRecord {
  return {
    id: String(r.id),
    name: String(r.name),
    strategy: String(r.strategy),
    options: json(text(r.options), {}),
    secrets_enc: text(r.secrets_enc),
    created_at: time(r.created_at),
    updated_at: time(r.updated_at),
  };
}

export function toSigningKey(r: Row): SigningKeyRecord {
  return {
    kid: String(r.kid),
    type: r.type as SigningKeyRecord["type"],
    alg: String(r.alg),
    public_jwk: json(text(r.public_jwk), {}),
    private_jwk_enc: String(r.private_jwk_enc),
    cert: text(r.cert) ?? null,
    activates_at: time((r.activates_at ?? r.created_at) as number),
    retire_at: iso(r.retire_at as number | null),
    revoked_at: iso(r.revoked_at as number | null),
    expires_at: iso(r.expires_at as number | null),
    inherited: r.inherited === 1,
    created_at: time(r.created_at),
  };
}

/** A patch without its undefined members (RPC keeps `{ a: undefined }` as an own property, which a spread would copy). */
export function definedOnly<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) as Partial<T>;
}
