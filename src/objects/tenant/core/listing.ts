import type { ListWindow } from "../../../shared/types";
import type { Sql, SqlValue } from "../../sql";

type Row = Record<string, unknown>;

/** The configuration tables that list newest first, each with its id column and the columns it filters on. */
const TABLES = {
  clients: { id: "client_id", filters: [] },
  resource_servers: { id: "id", filters: [] },
  client_grants: { id: "id", filters: ["audience", "client_id"] },
  connections: { id: "id", filters: ["strategy", "name"] },
  user_grants: { id: "id", filters: ["user_id", "client_id", "audience"] },
} as const;

type Table = keyof typeof TABLES;
type Filter<T extends Table> = Partial<Record<(typeof TABLES)[T]["filters"][number], string>>;

/**
 * One page of a table in SPEC §4.3 order (created_at, then id, descending): an offset window with the
 * total, or the rows strictly after a keyset position. Table and column names come from `TABLES`, never
 * from input; every value is bound.
 */
export function listRows<T extends Table>(
  sql: Sql,
  table: T,
  window: ListWindow,
  filter: Filter<T> = {},
): { rows: Row[]; total: number | null } {
  const { id, filters } = TABLES[table];
  const where: string[] = [];
  const values: SqlValue[] = [];
  for (const column of filters as readonly string[]) {
    const value = (filter as Record<string, string | undefined>)[column];
    if (value === undefined) continue;
    where.push(`${column} = ?`);
    values.push(value);
  }
  const filtered = where.length ? ` WHERE ${where.join(" AND ")}` : "";
  const order = ` ORDER BY created_at DESC, ${id} DESC LIMIT ?`;
  if ("offset" in window) {
    const rows = sql.exec<Row>(`SELECT * FROM ${table}${filtered}${order} OFFSET ?`, ...values, window.limit, window.offset);
    const total = sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${table}${filtered}`, ...values)[0]?.n ?? 0;
    return { rows, total };
  }
  if (window.after) {
    where.push(`(created_at, ${id}) < (?, ?)`);
    values.push(window.after.createdAt, window.after.id);
  }
  const after = where.length ? ` WHERE ${where.join(" AND ")}` : "";
  return { rows: sql.exec<Row>(`SELECT * FROM ${table}${after}${order}`, ...values, window.limit), total: null };
}
