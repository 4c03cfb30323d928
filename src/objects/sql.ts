/**
 * SQLite helpers for Durable Objects: a tagged-template query helper that always binds values with `?`,
 * and the append-only migration runner (one transaction per migration, recorded in `_migrations`).
 */

import { now } from "../shared/clock";

/** A value SQLite can bind; booleans become 1/0 (a JS `true` would be stored as the text "true"). */
export type SqlValue = string | number | boolean | null | undefined | ArrayBuffer | object;

function bind(value: SqlValue): string | number | null | ArrayBuffer {
  if (value === undefined || value === null) return null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "string" || typeof value === "number") return value;
  if (value instanceof ArrayBuffer) return value;
  return JSON.stringify(value);
}

/** Tagged SQL over a Durable Object's `SqlStorage`. */
export class Sql {
  constructor(readonly storage: SqlStorage) {}

  /** All rows of a query. */
  all<T>(strings: TemplateStringsArray, ...values: SqlValue[]): T[] {
    return this.storage.exec(strings.join("?"), ...values.map(bind)).toArray() as T[];
  }

  /** The first row, or undefined. */
  first<T>(strings: TemplateStringsArray, ...values: SqlValue[]): T | undefined {
    return this.all<T>(strings, ...values)[0];
  }

  /** Runs a statement and returns the number of rows it wrote. */
  run(strings: TemplateStringsArray, ...values: SqlValue[]): number {
    return this.storage.exec(strings.join("?"), ...values.map(bind)).rowsWritten;
  }

  /** Runs a statement built at run time (placeholders only; never interpolate values). */
  exec<T>(query: string, ...values: SqlValue[]): T[] {
    return this.storage.exec(query, ...values.map(bind)).toArray() as T[];
  }
}

/** One schema migration: `NNNN_slug` and its SQL text. */
export interface Migration {
  name: string;
  sql: string;
}

const NAME = /^(\d{4})_[a-z0-9_]+$/;

/**
 * Validates a migration list when the module loads: names are `NNNN_slug`, numbered 0001, 0002 ... with no
 * gap or duplicate. A broken list throws at import time, so the worker fails loudly instead of starting
 * with a half-known schema.
 */
export function defineMigrations(object: string, list: Migration[]): readonly Migration[] {
  list.forEach((migration, index) => {
    const match = NAME.exec(migration.name);
    if (!match) throw new Error(`${object} migration "${migration.name}" is not named NNNN_slug`);
    if (Number(match[1]) !== index + 1) {
      throw new Error(`${object} migration "${migration.name}" is out of sequence: expected number ${index + 1}`);
    }
    if (!migration.sql.trim()) throw new Error(`${object} migration "${migration.name}" is empty`);
  });
  return Object.freeze([...list]);
}

/**
 * Applies pending migrations, each in its own transaction together with its `_migrations` row. A recorded
 * migration whose name no longer matches the list (renamed, reordered or removed) is an error: the list is
 * append-only.
 */
export function applyMigrations(
  storage: DurableObjectStorage,
  migrations: readonly Migration[],
  options: { pinned?: boolean } = {},
): { applied: string[] } {
  const sql = new Sql(storage.sql);
  // Every object start runs this: when the table exists (all but the first start), one read and no DDL.
  let applied: { id: number; name: string }[];
  try {
    applied = sql.all<{ id: number; name: string }>`SELECT id, name FROM _migrations ORDER BY id`;
  } catch {
    sql.run`CREATE TABLE IF NOT EXISTS _migrations (
      id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`;
    applied = [];
  }
  for (const row of applied) {
    const expected = migrations[row.id - 1];
    if (!expected || expected.name !== row.name) {
      throw new Error(`migration ${row.id} was applied as "${row.name}" but the list has "${expected?.name}"`);
    }
  }
  // Pinned (issue 16): an object that already has a schema keeps it until an upgrade operation applies the
  // rest; a new object starts at the current schema.
  if (options.pinned && applied.length > 0) return { applied: [] };
  const done: string[] = [];
  for (const [index, migration] of migrations.entries()) {
    if (index < applied.length) continue;
    storage.transactionSync(() => {
      storage.sql.exec(migration.sql);
      sql.run`INSERT INTO _migrations (id, name, applied_at) VALUES (${index + 1}, ${migration.name}, ${now()})`;
    });
    done.push(migration.name);
  }
  return { applied: done };
}

/** The last migration applied to this object (`0012_mfa`), or null before the first (issue 16: schema pins). */
export function schemaVersion(storage: DurableObjectStorage): string | null {
  try {
    return new Sql(storage.sql).first<{ name: string }>`SELECT name FROM _migrations ORDER BY id DESC LIMIT 1`?.name ?? null;
  } catch {
    return null;
  }
}

/**
 * Whether a statement failed because it names `column`, which its table lacks: this code running on a tenant
 * pinned at an earlier schema (expand/contract, docs/deployments.md, "Shared tenants' schema pins"). SQLite words it
 * "table t has no column named c" (INSERT) or "no such column: c" (UPDATE, SELECT). The statement failed
 * when it was prepared, so it wrote nothing and the surrounding transaction goes on.
 */
export function isMissingColumn(error: unknown, column: string): boolean {
  const message = String((error as Error | undefined)?.message ?? error);
  return message.includes(`has no column named ${column}`) || message.includes(`no such column: ${column}`);
}

/** Parses a JSON column, tolerating NULL. */
export function json<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined || text === "") return fallback;
  return JSON.parse(text) as T;
}

/**
 * SQLite's default (BINARY) collation order, for rows sorted in JavaScript instead of by ORDER BY (which
 * costs a temporary B-tree per statement). Equal to it for every string within the Basic Multilingual Plane.
 */
export const binaryOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Epoch milliseconds to ISO 8601 (API shape); null stays null. */
export function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}
