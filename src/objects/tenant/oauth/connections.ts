import { fail, ok, type Result } from "../../../shared/errors";
import { CONNECTION_OPTION_FIELDS } from "../../../shared/schemas/connections";
import type { ConnectionPatch, Json, ListPage, ListWindow, NewConnection } from "../../../shared/types";
import type { ConnectionRecord } from "../../../shared/schemas/connections";
import type { Sql } from "../../sql";
import { getClient } from "./clients";
import { listRows } from "../core/listing";
import { toConnection } from "./rows";
import { audited } from "../core/events";
import { TenantRpc } from "../core/rpc";
import type { MigrationReport } from "../../../shared/actions/migration-report";
import { migrationReport } from "./migration-report";
import { changeConnectionClients, enabledClientsByConnection, enabledClientsOf, setEnabledClients } from "./connection-clients";
import type { ConnectionClientChange } from "../../../shared/schemas/connections";

const notFound = () => fail("inexistent_connection");

export function getConnection(sql: Sql, id: string): ConnectionRecord | null {
  const row = sql.first<Record<string, unknown>>`SELECT * FROM connections WHERE id = ${id}`;
  return row ? toConnection(row) : null;
}

export function listConnections(sql: Sql, window: ListWindow, filter: { strategy?: string; name?: string }): ListPage<ConnectionRecord> {
  const { rows, total } = listRows(sql, "connections", window, filter);
  return { items: rows.map(toConnection), total };
}

/** A connection with the clients that have it enabled (read from the clients' lists, the one store). */
export function withEnabledClients(sql: Sql, connection: ConnectionRecord): ConnectionRecord {
  return { ...connection, enabled_clients: enabledClientsOf(sql, connection.id) };
}

/**
 * Creates a connection. `enabled_clients` in the options is not stored there: it says which clients have
 * the connection (written into their lists). Absent, the connection is enabled for no client, as on the
 * reference platform (deploy-cli and Terraform's `auth0_connection_clients` create a connection and then
 * enable it with PATCH /connections/{id}/clients; Terraform refuses a fresh connection that already has
 * clients): clients without a list keep every connection they offered, in a list of their own that leaves
 * this one out (SPEC §4.2 still holds: a client without a list offers every connection).
 */
export function createConnection(sql: Sql, connection: NewConnection, now: number): Result<ConnectionRecord> {
  if (sql.first`SELECT 1 FROM connections WHERE name = ${connection.name}`) {
    return fail("connection_conflict", { name: connection.name });
  }
  const { enabled_clients: enabled, ...options } = connection.options;
  sql.run`INSERT INTO connections (id, name, strategy, options, secrets_enc, created_at, updated_at)
    VALUES (${connection.id}, ${connection.name}, ${connection.strategy}, ${options}, ${connection.secrets_enc},
      ${now}, ${now})`;
  setEnabledClients(sql, connection.id, Array.isArray(enabled) ? enabled.map(String) : [], now);
  return ok(withEnabledClients(sql, getConnection(sql, connection.id) as ConnectionRecord));
}

/**
 * `options` replaces the caller-visible options as a whole (the reference platform's PATCH semantics) while
 * the top-level fields stored beside them survive unless the patch names them.
 */
export function updateConnection(sql: Sql, id: string, patch: ConnectionPatch, now: number): Result<ConnectionRecord> {
  const current = getConnection(sql, id);
  if (!current) return notFound();
  const kept: Record<string, unknown> = {};
  for (const field of CONNECTION_OPTION_FIELDS) if (field in current.options) kept[field] = current.options[field];
  const options: Record<string, unknown> = { ...(patch.options ?? current.options), ...kept };
  const { enabled_clients: enabled, ...fields } = patch.fields ?? {};
  for (const [field, value] of Object.entries(fields)) {
    if (value === null || value === undefined) delete options[field];
    else options[field] = value;
  }
  // The clients live in their own lists (connection-clients.ts); a copy left here by older code is dropped.
  delete options.enabled_clients;
  const secretsEnc = patch.options ? (patch.secrets_enc ?? null) : current.secrets_enc;
  sql.run`UPDATE connections SET options = ${options}, secrets_enc = ${secretsEnc}, updated_at = ${now} WHERE id = ${id}`;
  if (Array.isArray(enabled)) setEnabledClients(sql, id, enabled.map(String), now);
  return ok(withEnabledClients(sql, getConnection(sql, id) as ConnectionRecord));
}

/**
 * Deletes a connection. One that still has users is refused: deleting it would strand them, and a later
 * connection of the same name would bring their old credentials back.
 */
export function deleteConnection(sql: Sql, id: string): Result<true> {
  const current = getConnection(sql, id);
  if (!current) return notFound();
  const users = sql.first<{ n: number }>`SELECT count(*) AS n FROM users WHERE connection = ${current.name}`?.n ?? 0;
  if (users > 0) {
    return fail("connection_has_users", { name: current.name, users });
  }
  sql.run`DELETE FROM connections WHERE id = ${id}`;
  return ok(true);
}

/**
 * The connections a client offers, in login-screen order (SPEC §4.2): its stored list (ids of deleted
 * connections dropped), or every tenant connection, oldest first, when it has none.
 */
export function getClientConnections(sql: Sql, clientId: string): Result<ConnectionRecord[]> {
  const client = getClient(sql, clientId);
  if (!client) return fail("inexistent_client");
  const all = sql.all<Record<string, unknown>>`SELECT * FROM connections ORDER BY created_at, id`.map(toConnection);
  const enabled = client.extra.enabled_connections;
  if (!Array.isArray(enabled)) return ok(all);
  const byId = new Map(all.map((c) => [c.id, c]));
  return ok(enabled.flatMap((id) => byId.get(String(id)) ?? []));
}

/** Replaces a client's ordered connection list; unknown ids are dropped, repeats kept once. */
export function setClientConnections(sql: Sql, clientId: string, ids: string[], now: number): Result<ConnectionRecord[]> {
  const client = getClient(sql, clientId);
  if (!client) return fail("inexistent_client");
  const known = new Set(sql.all<{ id: string }>`SELECT id FROM connections`.map((r) => r.id));
  const enabled: Json[] = [...new Set(ids)].filter((id) => known.has(id));
  const extra = { ...client.extra, enabled_connections: enabled };
  sql.run`UPDATE clients SET extra = ${extra}, updated_at = ${now} WHERE client_id = ${clientId}`;
  return getClientConnections(sql, clientId);
}

/** The connections facade (`stub.connections()`), including which connections a client has enabled. */
export class Connections extends TenantRpc {
  list(window: ListWindow, filter: { strategy?: string; name?: string }): ListPage<ConnectionRecord> {
    return this.read((sql) => {
      const page = listConnections(sql, window, filter);
      const enabled = enabledClientsByConnection(sql, page.items.map((c) => c.id));
      return { ...page, items: page.items.map((c) => ({ ...c, enabled_clients: enabled.get(c.id) ?? [] })) };
    });
  }

  get(id: string): ConnectionRecord | null {
    return this.read((sql) => {
      const connection = getConnection(sql, id);
      return connection && withEnabledClients(sql, connection);
    });
  }

  /** GET /connections/{id}/status: a custom database's migration report (issue 32 point 4), null when the connection is unknown. */
  migrationReport(id: string, importMode: boolean): MigrationReport | null {
    return this.read((sql, now) => {
      const connection = getConnection(sql, id);
      return connection ? migrationReport(sql, connection.name, importMode, now) : null;
    });
  }

  /** GET /connections/{id}/clients: the client ids that have the connection enabled, or null when it is unknown. */
  clients(id: string): string[] | null {
    return this.read((sql) => (getConnection(sql, id) ? enabledClientsOf(sql, id) : null));
  }

  /** PATCH /connections/{id}/clients: turns the connection on or off for each client named. */
  changeClients(id: string, changes: ConnectionClientChange[]): Result<true> {
    return this.commit((tx) => {
      const before = getConnection(tx.sql, id);
      const beforeClients = before && withEnabledClients(tx.sql, before);
      const result = changeConnectionClients(tx.sql, id, changes, tx.now);
      const after = () => withEnabledClients(tx.sql, getConnection(tx.sql, id) as ConnectionRecord);
      return audited(tx, this.audit, result, { entity: "connection", action: "updated", id, before: beforeClients, after });
    }, { config: true });
  }

  create(connection: NewConnection): Result<ConnectionRecord> {
    return this.commit((tx) => audited(tx, this.audit, createConnection(tx.sql, connection, tx.now), { entity: "connection", action: "created", id: connection.id, after: (c) => c }), { config: true });
  }

  update(id: string, patch: ConnectionPatch): Result<ConnectionRecord> {
    return this.commit((tx) => {
      const current = getConnection(tx.sql, id);
      const before = current && withEnabledClients(tx.sql, current);
      return audited(tx, this.audit, updateConnection(tx.sql, id, patch, tx.now), { entity: "connection", action: "updated", id, before, after: (c) => c });
    }, { config: true });
  }

  delete(id: string): Result<true> {
    return this.commit((tx) => {
      const before = getConnection(tx.sql, id);
      return audited(tx, this.audit, deleteConnection(tx.sql, id), { entity: "connection", action: "deleted", id, before });
    }, { config: true });
  }

  /** The connections a client has enabled. */
  ofClient(clientId: string): Result<ConnectionRecord[]> {
    return this.read((sql) => getClientConnections(sql, clientId));
  }

  /** Replaces the set of connections a client has enabled. */
  setForClient(clientId: string, ids: string[]): Result<ConnectionRecord[]> {
    return this.commit((tx) => {
      const before = getClient(tx.sql, clientId);
      const result = setClientConnections(tx.sql, clientId, ids, tx.now);
      const after = () => getClient(tx.sql, clientId);
      return audited(tx, this.audit, result, { entity: "client", action: "updated", id: clientId, before, after });
    }, { config: true });
  }
}
