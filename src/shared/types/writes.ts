/** Write DTOs and list windows for the management API. */
import type { ClientRecord } from "../schemas/clients";
import type { ResourceServerRecord } from "../schemas/resource-servers";
import type { Jwk } from "../schemas/signing-keys";
import type { Json } from "./json";
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

export type NewResourceServer = Omit<ResourceServerRecord, "is_system" | "created_at" | "updated_at">;

export type ResourceServerPatch = Partial<
  Pick<NewResourceServer, "name" | "scopes" | "signing_alg" | "token_lifetime" | "allow_offline_access" | "enforce_policies" | "token_dialect" | "signing_secret_enc">
> & {
  /** A generated encrypted secret, stored only when the API has none (switching to HS256). */
  signing_secret_enc_if_missing?: string;
};

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
