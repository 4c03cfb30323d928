import { fail, ok, type Result } from "../../../shared/errors";
import type { ListPage, ListWindow, NewClientGrant } from "../../../shared/types";
import type { ClientGrantPatch, ClientGrantRecord } from "../../../shared/schemas/client-grants";
import type { Sql } from "../../sql";
import { getClient } from "./clients";
import { listRows } from "../core/listing";
import { findResourceServer } from "./resource-servers";
import { toClientGrant } from "./rows";
import { audited } from "../core/events";
import { TenantRpc } from "../core/rpc";

const notFound = () => fail("inexistent_client_grant");

export function getClientGrant(sql: Sql, id: string): ClientGrantRecord | null {
  const row = sql.first<Record<string, unknown>>`SELECT * FROM client_grants WHERE id = ${id}`;
  return row ? toClientGrant(row) : null;
}

/** Newest first (SPEC §2.12), optionally for one audience and/or one client. */
export function listClientGrants(
  sql: Sql,
  window: ListWindow,
  filter: { audience?: string; client_id?: string },
): ListPage<ClientGrantRecord> {
  const { rows, total } = listRows(sql, "client_grants", window, filter);
  return { items: rows.map(toClientGrant), total };
}

/** Every scope must be defined on the audience's resource server; the list is kept without repeats. */
function checkScopes(sql: Sql, audience: string, scope: string[]): Result<string[]> {
  const api = findResourceServer(sql, audience);
  if (!api) return fail("inexistent_audience", { audience });
  const defined = new Set(api.scopes.map((s) => s.value));
  const undefinedScopes = scope.filter((s) => !defined.has(s));
  if (undefinedScopes.length) {
    return fail("undefined_scopes", { audience, scopes: undefinedScopes.join(", ") });
  }
  return ok([...new Set(scope)]);
}

export function createClientGrant(sql: Sql, grant: NewClientGrant, now: number): Result<ClientGrantRecord> {
  if (!getClient(sql, grant.client_id)) return fail("inexistent_client");
  const scope = checkScopes(sql, grant.audience, grant.scope);
  if (!scope.ok) return scope;
  // SPEC §9: one grant per (client, audience).
  if (sql.first`SELECT 1 FROM client_grants WHERE client_id = ${grant.client_id} AND audience = ${grant.audience}`) {
    return fail("client_grant_conflict");
  }
  sql.run`INSERT INTO client_grants (id, client_id, audience, scope, created_at, updated_at)
    VALUES (${grant.id}, ${grant.client_id}, ${grant.audience}, ${scope.value}, ${now}, ${now})`;
  setOrganizationSettings(sql, grant.id, grant);
  return ok(getClientGrant(sql, grant.id) as ClientGrantRecord);
}

/**
 * Writes the organization settings a caller gave (null clears one). Only then are the columns written, so a
 * tenant whose schema predates them (migration 0021) still takes grants without them.
 */
function setOrganizationSettings(sql: Sql, id: string, patch: Pick<ClientGrantPatch, "organization_usage" | "allow_any_organization">): void {
  if (patch.organization_usage !== undefined) sql.run`UPDATE client_grants SET organization_usage = ${patch.organization_usage} WHERE id = ${id}`;
  if (patch.allow_any_organization !== undefined) {
    const value = patch.allow_any_organization === null ? null : patch.allow_any_organization ? 1 : 0;
    sql.run`UPDATE client_grants SET allow_any_organization = ${value} WHERE id = ${id}`;
  }
}

/** The grants of system clients (the control plane's own access) are kept in step by the seed alone. */
const isSystemGrant = (sql: Sql, grant: ClientGrantRecord) => getClient(sql, grant.client_id)?.is_system === true;

export function updateClientGrant(sql: Sql, id: string, patch: ClientGrantPatch, now: number): Result<ClientGrantRecord> {
  const current = getClientGrant(sql, id);
  if (!current) return notFound();
  if (isSystemGrant(sql, current)) return fail("system_grant_immutable");
  if (patch.scope) {
    const checked = checkScopes(sql, current.audience, patch.scope);
    if (!checked.ok) return checked;
    sql.run`UPDATE client_grants SET scope = ${checked.value} WHERE id = ${id}`;
  }
  setOrganizationSettings(sql, id, patch);
  sql.run`UPDATE client_grants SET updated_at = ${now} WHERE id = ${id}`;
  return ok(getClientGrant(sql, id) as ClientGrantRecord);
}

export function deleteClientGrant(sql: Sql, id: string): Result<true> {
  const current = getClientGrant(sql, id);
  if (!current) return notFound();
  if (isSystemGrant(sql, current)) return fail("system_grant_undeletable");
  sql.run`DELETE FROM client_grants WHERE id = ${id}`;
  return ok(true);
}

/** The client-grants facade (`stub.clientGrants()`): configuration. */
export class ClientGrants extends TenantRpc {
  get(id: string): ClientGrantRecord | null {
    return this.read((sql) => getClientGrant(sql, id));
  }

  list(window: ListWindow, filter: { audience?: string; client_id?: string }): ListPage<ClientGrantRecord> {
    return this.read((sql) => listClientGrants(sql, window, filter));
  }

  create(grant: NewClientGrant): Result<ClientGrantRecord> {
    return this.commit((tx) => audited(tx, this.audit, createClientGrant(tx.sql, grant, tx.now), { entity: "client_grant", action: "created", id: (g) => g.id, after: (g) => g }), { config: true });
  }

  update(id: string, patch: ClientGrantPatch): Result<ClientGrantRecord> {
    return this.commit((tx) => {
      const before = getClientGrant(tx.sql, id);
      return audited(tx, this.audit, updateClientGrant(tx.sql, id, patch, tx.now), { entity: "client_grant", action: "updated", id, before, after: (g) => g });
    }, { config: true });
  }

  delete(id: string): Result<true> {
    return this.commit((tx) => {
      const before = getClientGrant(tx.sql, id);
      return audited(tx, this.audit, deleteClientGrant(tx.sql, id), { entity: "client_grant", action: "deleted", id, before });
    }, { config: true });
  }
}
