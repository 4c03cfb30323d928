import { fail, ok, type Result } from "../../../shared/errors";
import { MAX_CLIENT_METADATA_KEYS, privateKeyJwtCredentialIds } from "../../../shared/schemas/clients";
import type { ClientPatch, ListPage, ListWindow, NewClient } from "../../../shared/types";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { Sql } from "../../sql";
import { listRows } from "../core/listing";
import { definedOnly, toClient } from "./rows";
import { audited } from "../core/events";
import { TenantRpc } from "../core/rpc";
import { getSetting } from "../core/settings";

/** Methods that authenticate with the client's secret, so a client using one must have a secret. */
const SECRET_METHODS = new Set(["client_secret_post", "client_secret_basic", "client_secret_jwt"]);

const notFound = () => fail("inexistent_client");

export function getClient(sql: Sql, clientId: string): ClientRecord | null {
  const row = sql.first<Record<string, unknown>>`SELECT * FROM clients WHERE client_id = ${clientId}`;
  return row ? toClient(row) : null;
}

export function listClients(sql: Sql, window: ListWindow): ListPage<ClientRecord> {
  const { rows, total } = listRows(sql, "clients", window);
  return { items: rows.map(toClient), total };
}

/** Rules over the whole client that no single field's schema can state. */
function problemWith(client: NewClient): string | null {
  if (client.token_endpoint_auth_method === "private_key_jwt" && !client.jwks?.keys.length && !privateKeyJwtCredentialIds(client).length) {
    return "token_endpoint_auth_method private_key_jwt requires jwks with at least one public key, or client_authentication_methods";
  }
  if (SECRET_METHODS.has(client.token_endpoint_auth_method) && !client.client_secret_enc) {
    return `token_endpoint_auth_method ${client.token_endpoint_auth_method} requires a client secret`;
  }
  if (Object.keys(client.client_metadata).length > MAX_CLIENT_METADATA_KEYS) {
    return `client_metadata allows at most ${MAX_CLIENT_METADATA_KEYS} properties`;
  }
  return null;
}

function insert(sql: Sql, client: NewClient, now: number): void {
  sql.run`INSERT INTO clients (client_id, name, description, app_type, client_secret_enc, token_endpoint_auth_method,
      grant_types, callbacks, allowed_logout_urls, web_origins, jwks, is_first_party, oidc_conformant,
      client_metadata, extra, created_at, updated_at)
    VALUES (${client.client_id}, ${client.name}, ${client.description}, ${client.app_type}, ${client.client_secret_enc},
      ${client.token_endpoint_auth_method}, ${client.grant_types}, ${client.callbacks}, ${client.allowed_logout_urls},
      ${client.web_origins}, ${client.jwks}, ${client.is_first_party}, ${client.oidc_conformant},
      ${client.client_metadata}, ${client.extra}, ${now}, ${now})`;
}

function replace(sql: Sql, client: NewClient, now: number): void {
  sql.run`UPDATE clients SET name = ${client.name}, description = ${client.description}, app_type = ${client.app_type},
      client_secret_enc = ${client.client_secret_enc}, token_endpoint_auth_method = ${client.token_endpoint_auth_method},
      grant_types = ${client.grant_types}, callbacks = ${client.callbacks},
      allowed_logout_urls = ${client.allowed_logout_urls}, web_origins = ${client.web_origins}, jwks = ${client.jwks},
      is_first_party = ${client.is_first_party}, oidc_conformant = ${client.oidc_conformant},
      client_metadata = ${client.client_metadata}, extra = ${client.extra}, updated_at = ${now}
    WHERE client_id = ${client.client_id}`;
}

export function createClient(sql: Sql, client: NewClient, now: number): Result<ClientRecord> {
  if (getClient(sql, client.client_id)) return fail("client_exists");
  const problem = problemWith(client);
  if (problem) return fail("invalid_client_settings", { detail: problem });
  insert(sql, startsWithoutConnections(sql, client) ? { ...client, extra: { ...client.extra, enabled_connections: [] } } : client, now);
  return ok(getClient(sql, client.client_id) as ClientRecord);
}

/**
 * The reference's `flags.enable_client_connections` (default true): a new application offers every connection
 * (no list of its own, SPEC §4.2). Set to false, a new application starts with none (an empty list), unless it
 * was made with a list.
 */
function startsWithoutConnections(sql: Sql, client: NewClient): boolean {
  if (Array.isArray(client.extra?.enabled_connections)) return false;
  // The tenant settings record (settings/tenant-settings.ts keeps it under "tenant"; oauth may not import settings).
  const flags = getSetting<{ flags?: Record<string, unknown> }>(sql, "tenant", {}).flags;
  return flags?.enable_client_connections === false;
}

/** Merges a patch of string-keyed values: a null value removes its key. */
function merge<T>(current: Record<string, T>, patch: Record<string, T | null> | undefined): Record<string, T> {
  const next = { ...current };
  for (const [key, value] of Object.entries(patch ?? {})) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next;
}

/** Settings of a system client that, if changed, would lock the control plane out of its own API. */
const SYSTEM_LOCKED_FIELDS = ["grant_types", "token_endpoint_auth_method", "app_type"] as const;

export function updateClient(sql: Sql, clientId: string, patch: ClientPatch, now: number): Result<ClientRecord> {
  const current = getClient(sql, clientId);
  if (!current) return notFound();
  const { client_metadata, extra, client_secret_enc_if_missing, ...fields } = patch;
  const locked = current.is_system ? SYSTEM_LOCKED_FIELDS.filter((f) => fields[f] !== undefined) : [];
  if (locked.length) {
    return fail("system_client_settings", { fields: locked.join(", ") });
  }
  const next: NewClient = {
    ...current,
    ...definedOnly(fields),
    client_metadata: merge(current.client_metadata, client_metadata),
    extra: merge(current.extra, extra),
  };
  if (SECRET_METHODS.has(next.token_endpoint_auth_method) && !next.client_secret_enc) {
    next.client_secret_enc = client_secret_enc_if_missing ?? null;
  }
  const problem = problemWith(next);
  if (problem) return fail("invalid_client_settings", { detail: problem });
  const unknown = extra?.client_authentication_methods ? privateKeyJwtCredentialIds(next).find((id) => !sql.first`SELECT 1 FROM client_credentials WHERE id = ${id} AND client_id = ${clientId}`) : undefined;
  if (unknown) return fail("invalid_client_settings", { detail: `client_authentication_methods.private_key_jwt names ${unknown}, which is not a credential of this client` });
  replace(sql, next, now);
  return ok(getClient(sql, clientId) as ClientRecord);
}

/** Deletes a client and its grants; the deployment's own system clients stay. */
export function deleteClient(sql: Sql, clientId: string): Result<true> {
  const current = getClient(sql, clientId);
  if (!current) return notFound();
  if (current.is_system) return fail("system_client_undeletable");
  sql.run`DELETE FROM client_grants WHERE client_id = ${clientId}`;
  sql.run`DELETE FROM clients WHERE client_id = ${clientId}`;
  return ok(true);
}

/**
 * Replaces the client's secret. A system client's secret comes from the deployment's configuration
 * (CONTROL_PLANE_CLIENT_SECRET, re-applied at bootstrap), so it is not rotated here.
 */
export function rotateClientSecret(sql: Sql, clientId: string, secretEnc: string, now: number): Result<ClientRecord> {
  const current = getClient(sql, clientId);
  if (!current) return notFound();
  if (current.is_system) {
    return fail("system_client_secret");
  }
  sql.run`UPDATE clients SET client_secret_enc = ${secretEnc}, updated_at = ${now} WHERE client_id = ${clientId}`;
  return ok(getClient(sql, clientId) as ClientRecord);
}

/** The clients facade (`stub.clients()`): configuration, so every write bumps the configuration version. */
export class Clients extends TenantRpc {
  list(window: ListWindow): ListPage<ClientRecord> {
    return this.read((sql) => listClients(sql, window));
  }

  get(clientId: string): ClientRecord | null {
    return this.read((sql) => getClient(sql, clientId));
  }

  create(client: NewClient): Result<ClientRecord> {
    return this.commit((tx) => audited(tx, this.audit, createClient(tx.sql, client, tx.now), { entity: "client", action: "created", id: client.client_id, after: (c) => c }), { config: true });
  }

  update(clientId: string, patch: ClientPatch): Result<ClientRecord> {
    return this.commit((tx) => {
      const before = getClient(tx.sql, clientId);
      return audited(tx, this.audit, updateClient(tx.sql, clientId, patch, tx.now), { entity: "client", action: "updated", id: clientId, before, after: (c) => c });
    }, { config: true });
  }

  delete(clientId: string): Result<true> {
    return this.commit((tx) => {
      const before = getClient(tx.sql, clientId);
      return audited(tx, this.audit, deleteClient(tx.sql, clientId), { entity: "client", action: "deleted", id: clientId, before });
    }, { config: true });
  }

  rotateSecret(clientId: string, secretEnc: string): Result<ClientRecord> {
    return this.commit((tx) => {
      const before = getClient(tx.sql, clientId);
      return audited(tx, this.audit, rotateClientSecret(tx.sql, clientId, secretEnc, tx.now), { entity: "client", action: "updated", id: clientId, before, after: (c) => c });
    }, { config: true });
  }
}
