/**
 * GET /users (SPEC §4.2 "Search rules", §4.3): primary users only (linked accounts are identities of their
 * primary), filtered by `q` (the shared Lucene compiler over USERS_SEARCH) and `connection`, ordered by
 * created_at then user_id, as an offset page with its total or a keyset page after a cursor position.
 */
import { luceneToSql, type SqlParam } from "../../../shared/lucene";
import type { ListPage, ListWindow } from "../../../shared/types";
import type { UserQuery, UserRecord } from "../../../shared/schemas/users";
import { USERS_SEARCH } from "../../../shared/users-search";
import type { Sql } from "../../sql";
import { toUsers, type UserRow } from "./user-rows";

/** A Durable Object query binds at most 100 parameters (Cloudflare's documented limit). */
const MAX_BOUND = 100;

/**
 * Runs a query whose `?` placeholders are filled in order from `params`. Over the binding limit (a long
 * `q`), every placeholder reads its value from one bound JSON array instead: still bound, never inlined.
 * Placeholders are the only `?` in the text: the compiler never emits a literal containing one.
 */
function exec<T>(sql: Sql, query: string, params: SqlParam[]): T[] {
  if (params.length <= MAX_BOUND) return rowsOf<T>(sql.storage.exec(query, ...params));
  let i = 0;
  const packed = query.replace(/\?/g, () => `json_extract(?1, '$[${i++}]')`);
  return rowsOf<T>(sql.storage.exec(packed, JSON.stringify(params)));
}

/** Rows as plain objects, built from the raw cursor: measurably cheaper than `toArray()` on 100-row pages. */
function rowsOf<T>(cursor: SqlStorageCursor<Record<string, SqlStorageValue>>): T[] {
  const names = cursor.columnNames;
  const out: T[] = [];
  for (const values of cursor.raw()) {
    const row: Record<string, unknown> = {};
    for (let c = 0; c < names.length; c++) row[names[c] as string] = values[c];
    out.push(row as T);
  }
  return out;
}

/**
 * The filter of a listing: primary users only, `q` compiled over USERS_SEARCH (a bare substring term of 3+
 * characters becomes `seq IN (trigram index hits)`, which SQLite reads by rowid, then sorts the few hits),
 * and the `connection` parameter through the identities table.
 */
function filterOf(query: UserQuery): { where: string[]; params: SqlParam[] } {
  const where = ["linked_to IS NULL"];
  const params: SqlParam[] = [];
  const search = luceneToSql(query.q, USERS_SEARCH);
  if (search) {
    where.push(search.where);
    params.push(...search.params);
  }
  if (query.connection !== undefined) {
    where.push("user_id IN (SELECT user_id FROM identities WHERE connection = ?)");
    params.push(query.connection);
  }
  return { where, params };
}

/** One page of primary users in either pagination mode (SPEC §4.3). */
export function listUsers(sql: Sql, query: UserQuery, window: ListWindow): ListPage<UserRecord> {
  const { where, params } = filterOf(query);
  const dir = query.ascending ? "ASC" : "DESC";
  const order = ` ORDER BY created_at ${dir}, user_id ${dir} LIMIT ?`;
  if ("offset" in window) {
    const clause = ` WHERE ${where.join(" AND ")}`;
    const rows = exec<UserRow>(sql, `SELECT * FROM users${clause}${order} OFFSET ?`, [...params, window.limit, window.offset]);
    const total = exec<{ n: number }>(sql, `SELECT count(*) AS n FROM users${clause}`, params)[0]?.n ?? 0;
    return { items: toUsers(sql, rows), total };
  }
  if (window.after) {
    where.push(`(created_at, user_id) ${query.ascending ? ">" : "<"} (?, ?)`);
    params.push(window.after.createdAt, window.after.id);
  }
  const rows = exec<UserRow>(sql, `SELECT * FROM users WHERE ${where.join(" AND ")}${order}`, [...params, window.limit]);
  return { items: toUsers(sql, rows), total: null };
}
