import { fail, ok, type Result } from "../../../shared/errors";
import type { ConnectionClientChange } from "../../../shared/schemas/connections";
import type { Json } from "../../../shared/types";
import type { Sql } from "../../sql";

/**
 * Which applications may use which connection: ONE store, each client's ordered `extra.enabled_connections`
 * (SPEC §4.2; login reads it). A client without that list offers every connection of the tenant. The
 * connection-side views (`enabled_clients` on a connection, GET|PATCH /connections/{id}/clients) are read
 * from and written into that same list, so the two never disagree (issue 28 point 1).
 */

interface ClientLists {
  clientId: string;
  /** The client's explicit connection ids in login order, or null when it offers every connection. */
  enabled: string[] | null;
  extra: Record<string, Json>;
}

function clientLists(sql: Sql): ClientLists[] {
  return sql.all<{ client_id: string; extra: string }>`SELECT client_id, extra FROM clients ORDER BY created_at, client_id`.map((row) => {
    const extra = JSON.parse(row.extra || "{}") as Record<string, Json>;
    const list = extra.enabled_connections;
    return { clientId: row.client_id, enabled: Array.isArray(list) ? list.map(String) : null, extra };
  });
}

const allConnectionIds = (sql: Sql) => sql.all<{ id: string }>`SELECT id FROM connections ORDER BY created_at, id`.map((r) => r.id);

/** The client ids that have a connection enabled, oldest client first. */
export function enabledClientsOf(sql: Sql, connectionId: string): string[] {
  return clientLists(sql).flatMap((c) => (c.enabled === null || c.enabled.includes(connectionId) ? [c.clientId] : []));
}

/** `enabled_clients` for many connections in one pass over the clients (list pages). */
export function enabledClientsByConnection(sql: Sql, connectionIds: string[]): Map<string, string[]> {
  const lists = clientLists(sql);
  return new Map(connectionIds.map((id) => [id, lists.flatMap((c) => (c.enabled === null || c.enabled.includes(id) ? [c.clientId] : []))]));
}

function writeList(sql: Sql, client: ClientLists, enabled: string[], now: number): void {
  const extra = { ...client.extra, enabled_connections: enabled };
  sql.run`UPDATE clients SET extra = ${extra}, updated_at = ${now} WHERE client_id = ${client.clientId}`;
}

/**
 * Turns a connection on or off for one client. On: appended to the end of an explicit list (a client that
 * offers everything already has it). Off: removed; a client that offered everything gets an explicit list
 * of every other connection, in the tenant's order, so nothing else it offered changes.
 */
function applyChange(sql: Sql, client: ClientLists, connectionId: string, status: boolean, now: number, all: () => string[]): void {
  if (status) {
    if (client.enabled === null || client.enabled.includes(connectionId)) return;
    writeList(sql, client, [...client.enabled, connectionId], now);
    return;
  }
  if (client.enabled === null) {
    writeList(sql, client, all().filter((id) => id !== connectionId), now);
  } else if (client.enabled.includes(connectionId)) {
    writeList(sql, client, client.enabled.filter((id) => id !== connectionId), now);
  }
}

/**
 * PATCH /connections/{id}/clients: each change turns the connection on or off for one client. An unknown
 * client id refuses the whole request (nothing written); the last change for a client wins.
 */
export function changeConnectionClients(sql: Sql, connectionId: string, changes: ConnectionClientChange[], now: number): Result<true> {
  if (!sql.first`SELECT 1 FROM connections WHERE id = ${connectionId}`) return fail("inexistent_connection");
  const lists = new Map(clientLists(sql).map((c) => [c.clientId, c]));
  const missing = changes.find((change) => !lists.has(change.client_id));
  if (missing) return fail("inexistent_client", { client_id: missing.client_id });
  const wanted = new Map(changes.map((change) => [change.client_id, change.status]));
  let all: string[] | undefined;
  for (const [clientId, status] of wanted) {
    applyChange(sql, lists.get(clientId) as ClientLists, connectionId, status, now, () => (all ??= allConnectionIds(sql)));
  }
  return ok(true);
}

/**
 * The deprecated `enabled_clients` field of POST/PATCH /connections: exactly these clients have the
 * connection, every other client loses it. Ids of clients that do not exist are dropped, as
 * PATCH /clients/{id}/connections drops unknown connection ids.
 */
export function setEnabledClients(sql: Sql, connectionId: string, clientIds: string[], now: number): void {
  const wanted = new Set(clientIds);
  let all: string[] | undefined;
  for (const client of clientLists(sql)) {
    applyChange(sql, client, connectionId, wanted.has(client.clientId), now, () => (all ??= allConnectionIds(sql)));
  }
}
