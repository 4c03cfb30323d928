import type { Sql, SqlValue } from "../sql";

/**
 * A tenant's rows copied for the capacity model's replay (issue 31, bench and tests only): the replay runs a
 * window's calls on the state as it was when the window opened, in a scratch object. The outbox and logs are
 * left out (their content does not change a request's path).
 */
export type TableRows = Record<string, Record<string, SqlValue>[]>;

const SKIPPED = new Set(["outbox", "logs", "_migrations"]);

/** Plain tables (a full-text index and its shadow tables follow their content by triggers, never copied). */
function tableNames(sql: Sql): string[] {
  const tables = sql.all<{ name: string; sql: string | null }>`SELECT name, sql FROM sqlite_master
    WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'`;
  const virtual = tables.filter((t) => /^CREATE VIRTUAL TABLE/i.test(t.sql ?? "")).map((t) => t.name);
  return tables
    .map((t) => t.name)
    .filter((name) => !SKIPPED.has(name) && !virtual.some((v) => name === v || name.startsWith(`${v}_`)));
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Every row of every table but the skipped ones, stored columns only (generated ones follow). */
export function dumpTables(sql: Sql): TableRows {
  return Object.fromEntries(
    tableNames(sql).map((name) => {
      const columns = sql.exec<{ name: string; hidden: number }>("SELECT name, hidden FROM pragma_table_xinfo(?)", name).filter((c) => c.hidden === 0);
      return [name, sql.exec<Record<string, SqlValue>>(`SELECT ${columns.map((c) => quote(c.name)).join(", ")} FROM ${quote(name)}`)];
    }),
  );
}

/**
 * Replaces this object's rows by `rows`, in one transaction with foreign keys checked at its end. Rows that
 * triggers derive from others (an index table) are inserted once, then the table is made exactly the copy.
 */
export function restoreTables(storage: DurableObjectStorage, sql: Sql, rows: TableRows): void {
  storage.transactionSync(() => {
    sql.exec("PRAGMA defer_foreign_keys = ON");
    const names = tableNames(sql).filter((name) => name in rows);
    for (const name of names) sql.exec(`DELETE FROM ${quote(name)}`);
    const insert = (name: string) => {
      for (const row of rows[name] ?? []) {
        const columns = Object.keys(row);
        sql.exec(`INSERT OR IGNORE INTO ${quote(name)} (${columns.map(quote).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`, ...columns.map((c) => row[c] ?? null));
      }
    };
    for (const name of names) insert(name);
    for (const name of names) {
      const count = sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${quote(name)}`)[0]?.n ?? 0;
      if (count === (rows[name]?.length ?? 0)) continue;
      sql.exec(`DELETE FROM ${quote(name)}`);
      insert(name);
    }
  });
}
